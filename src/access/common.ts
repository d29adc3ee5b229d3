/** What the access services share. */
import { GatehouseError, validation } from '../errors.ts';
import type { Item, Store } from '../store/store.ts';
import type { Hierarchy } from '../tenancy/model.ts';

export interface AccessDeps {
  store: Store;
  hierarchy: Hierarchy;
  now: () => Date;
}

const KEY_ATTR = /^(PK|SK|GSI\dPK|GSI\dSK|Type)$/;

/** An item as the API shows it: no key attributes. */
export function publicOf<T>(item: Item | T): T {
  const out: Item = {};
  for (const [k, v] of Object.entries(item as Item)) if (!KEY_ATTR.test(k)) out[k] = v;
  return out as T;
}

export const ID_RE = /^[A-Za-z0-9_.:-]{1,128}$/;
/** Readable ids of system roles: `platform-admin`. */
export const SLUG_RE = /^[a-z][a-z0-9-]{1,62}$/;

export function checkId(field: string, v: unknown) {
  if (typeof v !== 'string' || !ID_RE.test(v)) throw validation(field, 'Use 1-128 letters, digits, or _ . : -');
}

export function checkName(field: string, v: unknown, max = 100): string {
  if (typeof v !== 'string' || !v.trim() || v.trim().length > max) throw validation(field, `Use 1-${max} characters`);
  const name = v.trim();
  if (name.includes('#')) throw validation(field, 'May not contain #');
  return name;
}

/** An ISO date or date-time → a full ISO instant, or 400 naming the field. */
export function isoInstant(field: string, v: string): string {
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00.000Z` : v);
  if (Number.isNaN(ms)) throw validation(field, 'Must be an ISO date or date-time');
  return new Date(ms).toISOString();
}

/** Store VERSION_CONFLICT on the item the client named with If-Match → 412. */
export function preconditionFailed(what: string, expected: number) {
  return () => new GatehouseError('PRECONDITION_FAILED', `${what} is no longer at version ${expected}; re-read it and retry`, { entity: what });
}

/** Retries an operation whose internal optimistic checks lost a race (not the client's If-Match). */
export async function retryOnConflict<T>(fn: () => Promise<T>, attempts = 4): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (!(e instanceof GatehouseError && e.code === 'VERSION_CONFLICT') || i + 1 >= attempts) throw e;
      await new Promise((r) => setTimeout(r, Math.random() * 20 * 2 ** i));
    }
  }
}
