/** What the entitlement, audit, notification and session services share. */
import { GatehouseError, notFound, validation } from '../errors.ts';
import { keys, USER_SCOPE, type Key } from '../store/keys.ts';
import { tx, type Item, type Store, type TxAction } from '../store/store.ts';
import type { Hierarchy, ScopeRef } from '../tenancy/model.ts';

export interface ServiceDeps {
  store: Store;
  hierarchy: Hierarchy;
  now: () => Date;
}

const KEY_ATTR = /^(PK|SK|GSI\dPK|GSI\dSK|Type)$/;

/** An item as the API shows it: no key attributes. */
export function publicOf<T>(item: Item): T {
  const out: Item = {};
  for (const [k, v] of Object.entries(item)) if (!KEY_ATTR.test(k)) out[k] = v;
  return out as T;
}

/** An entity as an audit before/after summary (record.ts redacts secrets). */
export const summaryOf = (it: object): Item => publicOf<Item>(it as Item);

export const ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

export function checkId(field: string, v: string) {
  if (!ID_PATTERN.test(v)) throw validation(field, 'Use 1-128 letters, digits, or _ . : -');
}

/** An ISO date (`2025-03-15`, taken as midnight UTC) or date-time, normalised to a full ISO instant. */
export function isoInstant(field: string, v: string): string {
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00.000Z` : v);
  if (Number.isNaN(ms)) throw validation(field, 'Must be an ISO date or date-time');
  return new Date(ms).toISOString();
}

/** A resolved scope reference: its key prefix and the condition check proving it is the tenant's. */
export interface ResolvedScope {
  ref: ScopeRef;
  KIND: string;
  isTenant: boolean;
  isUser: boolean;
  /** The item that proves the scope exists in this tenant (tenant, scope node or user). */
  ownerKey: Key;
  check: TxAction;
}

/**
 * Resolves `{kind, id}` in a tenant: the tenant kind, a hierarchy kind, or (`allowUser`) `user` for
 * user-level settings. Unknown kinds name `scope.kind`; a tenant scope must be the tenant itself.
 */
export function resolveScope(h: Hierarchy, tenantId: string, ref: ScopeRef, opts: { allowUser?: boolean; field?: string } = {}): ResolvedScope {
  const field = opts.field ?? 'scope';
  checkId(`${field}.id`, ref.id);
  const missing = () => notFound(ref.kind, ref.id);
  if (ref.kind === h.tenantKind) {
    if (ref.id !== tenantId) throw missing();
    const ownerKey = keys.tenant(h.T, tenantId);
    return { ref, KIND: h.T, isTenant: true, isUser: false, ownerKey, check: tx.check(ownerKey, { mustExist: true, onConditionFailed: missing }) };
  }
  if (opts.allowUser && ref.kind === 'user') {
    const ownerKey = keys.user(ref.id);
    return { ref, KIND: USER_SCOPE, isTenant: false, isUser: true, ownerKey, check: tenantOwned(ownerKey, tenantId, () => notFound('user', ref.id)) };
  }
  const def = h.kinds[ref.kind];
  if (!def) {
    const allowed = [h.tenantKind, ...Object.keys(h.kinds), ...(opts.allowUser ? ['user'] : [])].join(', ');
    throw validation(`${field}.kind`, `Unknown scope kind "${ref.kind}"; use one of ${allowed}`);
  }
  const ownerKey = keys.scopeNode(def.prefix, ref.id);
  return { ref, KIND: def.prefix, isTenant: false, isUser: false, ownerKey, check: tenantOwned(ownerKey, tenantId, missing) };
}

/** A condition check: the item exists and belongs to the tenant. */
export function tenantOwned(key: Key, tenantId: string, onFail: () => GatehouseError): TxAction {
  return tx.check(key, {
    mustExist: true,
    condition: { expression: '#tid = :tid', names: { '#tid': 'tenantId' }, values: { ':tid': tenantId } },
    onConditionFailed: onFail,
  });
}

/** The key prefix of a kind in a path (the tenant kind maps to T). */
export function prefixOfKind(h: Hierarchy, kind: string): string {
  if (kind === h.tenantKind) return h.T;
  const def = h.kinds[kind];
  if (!def) throw new GatehouseError('INTERNAL', `The stored path names an unknown kind "${kind}"`);
  return def.prefix;
}

/** `If-Match: "3"` / `W/"3"` → 3; absent → undefined; anything else → 412. */
export function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined || header === '') return undefined;
  const m = /^(?:W\/)?"?(\d+)"?$/.exec(header.trim());
  if (!m) throw new GatehouseError('PRECONDITION_FAILED', 'If-Match must be the ETag of the current version, e.g. "3"');
  return Number(m[1]);
}

export const etagOf = (version: number) => `"${version}"`;

/** VERSION_CONFLICT for a stale If-Match is 412 (the client named a version); otherwise 409. */
export async function withIfMatch<T>(ifMatch: number | undefined, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (ifMatch !== undefined && e instanceof GatehouseError && e.code === 'VERSION_CONFLICT') {
      throw new GatehouseError('PRECONDITION_FAILED', `${e.message} (If-Match ${ifMatch})`, e.details);
    }
    throw e;
  }
}

export const DAY_MS = 24 * 3600 * 1000;
export const epochSeconds = (d: Date) => Math.floor(d.getTime() / 1000);
