/** Scope references as the access module uses them: keys, tenancy checks, tree paths. */
import { GatehouseError, validation } from '../errors.ts';
import { keys, type Key } from '../store/keys.ts';
import type { Store } from '../store/store.ts';
import type { Hierarchy, ScopeNodeRecord, ScopeRef, TenantRecord } from '../tenancy/model.ts';

/** The key prefix of a kind (`undefined` for a kind the hierarchy does not declare). */
export function prefixOf(h: Hierarchy, kind: string): string | undefined {
  if (kind === h.tenantKind) return h.T;
  return h.kinds[kind]?.prefix;
}

export const isTenantScope = (h: Hierarchy, tenantId: string, s: ScopeRef) => s.kind === h.tenantKind && s.id === tenantId;

/** The canonical item of a scope: the tenant item or the node's METADATA. */
export function scopeItemKey(h: Hierarchy, s: ScopeRef): Key | undefined {
  if (s.kind === h.tenantKind) return keys.tenant(h.T, s.id);
  const p = h.kinds[s.kind]?.prefix;
  return p ? keys.scopeNode(p, s.id) : undefined;
}

/** A scope that exists in the tenant, with its ancestors (root first, tenant included). */
export interface ResolvedScope {
  ref: ScopeRef;
  KIND: string;
  ancestors: ScopeRef[];
  name?: string;
  /** GSI5SK of the node (the tenant's is just its segment). */
  treePath: string;
}

export function treePathOf(h: Hierarchy, refs: ScopeRef[]): string {
  return keys.treePath(refs.map((r) => ({ KIND: prefixOf(h, r.kind) ?? r.kind.toUpperCase(), id: r.id })));
}

export const scopeNotFound = (s: ScopeRef, field = 'scope') =>
  new GatehouseError('NOT_FOUND', `${field}: no ${s.kind} ${s.id} in this tenant`, { entity: s.kind, id: s.id, errors: [{ field, message: 'Not found in this tenant' }] });

/** From an already-read item (tenant or node), or throws 404 naming `field`. */
export function resolvedFrom(h: Hierarchy, tenantId: string, s: ScopeRef, item: Record<string, unknown> | undefined, field = 'scope'): ResolvedScope {
  if (s.kind === h.tenantKind) {
    if (s.id !== tenantId || !item) throw scopeNotFound(s, field);
    const t = item as unknown as TenantRecord;
    return { ref: s, KIND: h.T, ancestors: [], name: t.name, treePath: treePathOf(h, [s]) };
  }
  const node = item as unknown as ScopeNodeRecord | undefined;
  if (!node || node.tenantId !== tenantId || node.kind !== s.kind) throw scopeNotFound(s, field);
  return { ref: s, KIND: h.kinds[s.kind].prefix, ancestors: node.path, name: node.name, treePath: treePathOf(h, [...node.path, s]) };
}

/** Reads a scope (one strongly consistent GetItem) and proves it belongs to the tenant. */
export async function resolveScope(store: Store, h: Hierarchy, tenantId: string, s: ScopeRef, field = 'scope'): Promise<ResolvedScope> {
  const key = checkedScopeKey(h, s, field);
  return resolvedFrom(h, tenantId, s, await store.get(key), field);
}

export function checkedScopeKey(h: Hierarchy, s: ScopeRef, field = 'scope'): Key {
  if (!s || typeof s.kind !== 'string' || typeof s.id !== 'string' || !s.id) throw validation(field, 'A scope is {kind, id}');
  const key = scopeItemKey(h, s);
  if (!key) throw validation(`${field}.kind`, `Unknown scope kind "${s.kind}"; use one of ${[h.tenantKind, ...Object.keys(h.kinds)].join(', ')}`);
  return key;
}
