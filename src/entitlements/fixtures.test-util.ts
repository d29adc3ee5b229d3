/**
 * Test fixtures: tenants, scope nodes and users written with the model.ts shapes through the Store
 * and keys.ts (the tenancy and identity services are written concurrently; these items are what
 * they store).
 */
import { ulid } from 'ulid';
import { allShards, keys, SHARDS } from '../store/keys.ts';
import { Store } from '../store/store.ts';
import type { Hierarchy, ScopeNodeRecord, ScopeRef, TenantRecord, UserRecord } from '../tenancy/model.ts';
import { loadHierarchy } from '../tenancy/hierarchy.ts';
import type { RequestContext } from '../context.ts';
import type { TestTable } from '../../test/harness.ts';

export const facilities = (): Hierarchy => loadHierarchy('facilities');
export const platform = (): Hierarchy => loadHierarchy('platform');

export const storeOf = (t: TestTable, now?: () => Date) => new Store({ doc: t.doc, tableName: t.tableName, cursorSecret: 'fixture-secret-0123456789', ...(now ? { now } : {}) });

export const adminCtx = (id = 'admin-1'): RequestContext => ({ actor: { id, type: 'user' }, requestId: `req-${ulid()}`, ip: '203.0.113.7', userAgent: 'vitest' });

export async function putTenant(store: Store, h: Hierarchy, name = `Tenant ${ulid()}`): Promise<TenantRecord> {
  const id = ulid();
  const item = await store.put({ ...keys.tenant(h.T, id), ...keys.tenantIndex(h.T, id), Type: 'Tenant', id, name, status: 'active', attributes: {} }, { ifNotExists: true });
  return item as unknown as TenantRecord;
}

/** A node under `parent` (a node, or the tenant when omitted). */
export async function putNode(store: Store, h: Hierarchy, tenantId: string, kind: string, parent?: ScopeNodeRecord): Promise<ScopeNodeRecord> {
  const def = h.kinds[kind];
  const id = ulid();
  const tenantRef: ScopeRef = { kind: h.tenantKind, id: tenantId };
  const path: ScopeRef[] = parent ? [...parent.path, { kind: parent.kind, id: parent.id }] : [tenantRef];
  const pathString = [...path, { kind, id }].map((r) => keys.pathSegment(r.kind === h.tenantKind ? h.T : h.kinds[r.kind].prefix, r.id)).join('/');
  const createdAt = new Date().toISOString();
  const item = await store.put(
    {
      ...keys.scopeNode(def.prefix, id),
      ...keys.scopeNodeIndex(h.T, tenantId, def.prefix, id, createdAt, pathString),
      Type: 'ScopeNode',
      id,
      tenantId,
      kind,
      name: `${kind} ${id.slice(-4)}`,
      parentKind: parent ? parent.kind : h.tenantKind,
      parentId: parent ? parent.id : tenantId,
      path,
      attributes: {},
    },
    { ifNotExists: true },
  );
  return item as unknown as ScopeNodeRecord;
}

export async function putUser(
  store: Store,
  h: Hierarchy,
  tenantId: string,
  o: { userType?: string; email?: string; firstName?: string; lastName?: string; status?: 'active' | 'disabled' } = {},
): Promise<UserRecord & { userType?: string }> {
  const id = ulid();
  const status = o.status ?? 'active';
  const item = await store.put(
    {
      ...keys.user(id),
      ...keys.userIndex(h.T, tenantId, id, status, '9999-12-31'),
      Type: 'User',
      id,
      tenantId,
      email: o.email ?? `${id.toLowerCase()}@example.com`,
      firstName: o.firstName,
      lastName: o.lastName,
      status,
      userType: o.userType ?? 'internal',
    },
    { ifNotExists: true },
  );
  return item as unknown as UserRecord & { userType?: string };
}

/** Every audit record of a tenant (all shards), oldest first. */
export async function auditOf(store: Store, T: string, tenantId: string) {
  const all = await Promise.all(allShards(SHARDS.audit).map((s) => store.queryAll<Record<string, unknown>>({ pk: keys.auditShard(T, tenantId, s).pk })));
  return all.flat().sort((a, b) => String(a.SK).localeCompare(String(b.SK)));
}
