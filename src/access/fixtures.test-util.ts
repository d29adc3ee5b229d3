/**
 * Test fixtures: tenants, scope nodes, users and tenant grants written with exactly the
 * src/tenancy/model.ts shapes through the Store and keys (until the tenancy/identity services are
 * used instead). Status changes bump the stamps as those services must.
 */
import { ulid } from 'ulid';
import { keys } from '../store/keys.ts';
import { Store, tx } from '../store/store.ts';
import { loadHierarchy } from '../tenancy/hierarchy.ts';
import type { Hierarchy, ScopeNodeRecord, ScopeRef, TenantStatus, UserStatus } from '../tenancy/model.ts';
import type { TestTable } from '../../test/harness.ts';
import { createAccess } from './index.ts';
import { prefixOf, treePathOf } from './scopes.ts';
import { stamps } from './stamps.ts';
import { systemContext } from '../context.ts';

export const facilities = (): Hierarchy => loadHierarchy('facilities');
export const ctx = systemContext('test');

export function storeOf(t: TestTable, now?: () => Date) {
  return new Store({ doc: t.doc, tableName: t.tableName, cursorSecret: 'access-tests-secret-0123456789', now });
}

export function fixtures(store: Store, h: Hierarchy) {
  const paths = new Map<string, ScopeRef[]>();
  const tenantScope = (tenantId: string): ScopeRef => ({ kind: h.tenantKind, id: tenantId });

  return {
    tenantScope,
    async tenant(opts: { id?: string; name?: string; status?: TenantStatus } = {}) {
      const id = opts.id ?? ulid();
      await store.put({ ...keys.tenant(h.T, id), ...keys.tenantIndex(h.T, id), Type: 'Tenant', id, name: opts.name ?? `tenant-${id}`, status: opts.status ?? 'active', attributes: {} });
      return id;
    },

    /** A scope node under `parent` (the tenant when omitted). */
    async node(tenantId: string, kind: string, parent?: ScopeRef, opts: { id?: string; name?: string } = {}): Promise<ScopeRef> {
      const id = opts.id ?? ulid();
      const par = parent ?? tenantScope(tenantId);
      let parentPath: ScopeRef[] = [];
      if (par.kind !== h.tenantKind) {
        parentPath = paths.get(`${par.kind}#${par.id}`) ?? (await store.get<ScopeNodeRecord>(keys.scopeNode(prefixOf(h, par.kind)!, par.id)))!.path;
      }
      const path = [...parentPath, par];
      const self = { kind, id };
      paths.set(`${kind}#${id}`, path);
      const KIND = prefixOf(h, kind)!;
      const createdAt = new Date().toISOString();
      const node = { id, tenantId, kind, name: opts.name ?? `${kind}-${id.slice(-6)}`, parentKind: par.kind, parentId: par.id, path, attributes: {} };
      await store.transactWrite([
        tx.put({ ...keys.scopeNode(KIND, id), ...keys.scopeNodeIndex(h.T, tenantId, KIND, id, createdAt, treePathOf(h, [...path, self])), Type: 'ScopeNode', ...node }),
        tx.put({ ...keys.childEdge(prefixOf(h, par.kind)!, par.id, KIND, id), Type: 'ScopeChild', ...node }),
      ]);
      return self;
    },

    async user(tenantId: string, opts: { id?: string; status?: UserStatus; endDate?: string } = {}) {
      const id = opts.id ?? ulid();
      await store.put({
        ...keys.user(id),
        ...keys.userIndex(h.T, tenantId, id, opts.status ?? 'active', opts.endDate ?? '9999-12-31'),
        Type: 'User',
        id,
        tenantId,
        email: `${id.toLowerCase()}@example.com`,
        status: opts.status ?? 'active',
        ...(opts.endDate ? { endDate: opts.endDate } : {}),
      });
      return id;
    },

    /** A tenant grant (membership of the tenant node) holding roles, as the tenancy module writes it. */
    async grant(userId: string, tenantId: string, roleIds: string[]) {
      const tenantGrantId = ulid();
      const body = { userId, tenantId, roleIds, tenantGrantId, kind: h.tenantKind, scopeId: tenantId };
      await store.transactWrite([
        tx.put({ ...keys.membershipOfUser(userId, h.T, tenantId), ...keys.tenantGrantIndex(tenantGrantId), Type: 'Membership', ...body }),
        tx.put({ ...keys.membershipOfScope(h.T, tenantId, userId), Type: 'Membership', ...body }),
        ...stamps.bumpUser(userId),
      ]);
      return tenantGrantId;
    },

    async removeGrant(userId: string, tenantId: string) {
      await store.transactWrite([tx.delete(keys.membershipOfUser(userId, h.T, tenantId)), tx.delete(keys.membershipOfScope(h.T, tenantId, userId)), ...stamps.bumpUser(userId)]);
    },

    async userStatus(userId: string, status: UserStatus, endDate?: string) {
      await store.transactWrite([tx.update(keys.user(userId), { set: { status, endDate }, mustExist: true }), ...stamps.bumpUser(userId)]);
    },

    async tenantStatus(tenantId: string, status: TenantStatus) {
      await store.transactWrite([tx.update(keys.tenant(h.T, tenantId), { set: { status }, mustExist: true }), ...stamps.bumpTenant(h.T, tenantId)]);
    },
  };
}

/** A table-backed access module with system permissions and the given extra catalog keys. */
export async function accessOn(store: Store, h: Hierarchy, opts: { cache?: { maxEntries?: number; settleMs?: number }; now?: () => Date } = {}) {
  return createAccess({ store, hierarchy: h, ...opts });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
