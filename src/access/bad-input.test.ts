/**
 * Bad input is refused naming the field, through the services and the HTTP API, and leaves
 * nothing half-written (the table is read back).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { createApp } from '../http/app.ts';
import type { RouteModule } from '../http/deps.ts';
import { createLogger } from '../http/logger.ts';
import { allShards, keys, SHARDS } from '../store/keys.ts';
import type { Item, Store } from '../store/store.ts';
import type { ScopeRef } from '../tenancy/model.ts';
import { accessOn, ctx, facilities, fixtures, storeOf } from './fixtures.test-util.ts';
import { accessRoutes, type Access } from './index.ts';

const h = facilities();
let t: TestTable;
let store: Store;
let access: Access;
let f: ReturnType<typeof fixtures>;
let tid: string;
let other: string;
let uid: string;
let building: ScopeRef;
let foreignNode: ScopeRef;
let app: ReturnType<typeof createApp>;

const asAdmin: RouteModule = (a) => {
  a.use('/v1/*', async (c, next) => {
    c.set('principal', { actor: { id: 'test-admin', type: 'apiKey' }, platformAdmin: true });
    await next();
  });
};

beforeAll(async () => {
  t = await createTestTable();
  store = storeOf(t);
  f = fixtures(store, h);
  access = await accessOn(store, h);
  await access.bootstrap(ctx);
  await access.permissions.ensure(ctx, [{ key: 'devices:read' }, { key: 'devices:write' }]);
  tid = await f.tenant();
  other = await f.tenant();
  building = await f.node(tid, 'building', await f.node(tid, 'project'));
  foreignNode = await f.node(other, 'project');
  uid = await f.user(tid);
  app = createApp({ version: 'test', dynamoEndpoint: 'local', tableName: t.tableName, logger: createLogger('silent'), routes: [asAdmin, accessRoutes(access)] });
}, 60_000);
afterAll(() => t?.drop());

const rolesOfTenant = (tenantId: string) => store.queryAll<Item>({ pk: keys.rolesOfTenant(h.T, tenantId).pk, sk: { beginsWith: 'ROLE#' } });
const roleNames = (tenantId: string) => store.queryAll<Item>({ pk: keys.roleNamesOf(tenantId).pk });
const tenantStamps = (tenantId: string) => store.batchGet<Item>(allShards(SHARDS.stampRead).map((s) => keys.tenantStamp(h.T, tenantId, s)));
const userPartition = (userId: string) => store.queryAll<Item>({ pk: keys.user(userId).PK });
const fieldsOf = (e: unknown) => ((e as { details?: { errors?: { field: string }[] } }).details?.errors ?? []).map((x) => x.field);

async function send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await app.request(path, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { errors?: { field: string }[] }, headers: res.headers };
}

describe('roles', () => {
  it('an unknown permission key is 400 naming permissions[i].key, and nothing is written', async () => {
    const before = await tenantStamps(tid);
    const e = await access.roles.create(ctx, tid, { name: 'bad', permissions: [{ key: 'devices:read', effect: 'ALLOW' }, { key: 'devices:explode', effect: 'ALLOW' }] }).catch((x) => x);
    expect(e).toMatchObject({ code: 'VALIDATION', status: 400 });
    expect(fieldsOf(e)).toEqual(['permissions[1].key']);
    const malformed = await access.roles.create(ctx, tid, { name: 'bad', permissions: [{ key: 'no spaces allowed', effect: 'ALLOW' }] }).catch((x) => x);
    expect(fieldsOf(malformed)).toEqual(['permissions[0].key']);
    const http = await send('POST', `/v1/tenants/${tid}/roles`, { name: 'bad', permissions: [{ key: 'devices:write', effect: 'ALLOW' }, { key: 'devices:explode', effect: 'ALLOW' }] });
    expect(http.status).toBe(400);
    expect(http.body.errors?.map((x) => x.field)).toEqual(['permissions[1].key']);
    expect(await rolesOfTenant(tid)).toEqual([]);
    expect(await roleNames(tid)).toEqual([]);
    expect(await tenantStamps(tid)).toEqual(before);
  });

  it('a cyclic parent is 400 naming parentRoleId, and no role changes', async () => {
    const a = await access.roles.create(ctx, tid, { name: 'a', permissions: [{ key: 'devices:read', effect: 'ALLOW' }] });
    const b = await access.roles.create(ctx, tid, { name: 'b', parentRoleId: a.id, permissions: [] });
    const c = await access.roles.create(ctx, tid, { name: 'c', parentRoleId: b.id, permissions: [] });
    const snapshot = await store.batchGet<Item>([a, b, c].map((r) => keys.role(r.id)));
    const e = await access.roles.update(ctx, tid, a.id, { parentRoleId: c.id }).catch((x) => x);
    expect(e).toMatchObject({ code: 'VALIDATION' });
    expect(fieldsOf(e)).toEqual(['parentRoleId']);
    const self = await access.roles.update(ctx, tid, a.id, { parentRoleId: a.id }).catch((x) => x);
    expect(fieldsOf(self)).toEqual(['parentRoleId']);
    const fresh = await access.roles.get(tid, a.id);
    const http = await send('PATCH', `/v1/tenants/${tid}/roles/${a.id}`, { parentRoleId: c.id }, { 'if-match': `"${fresh.version}"` });
    expect(http.status).toBe(400);
    expect(http.body.errors?.map((x) => x.field)).toEqual(['parentRoleId']);
    expect(await store.batchGet<Item>([a, b, c].map((r) => keys.role(r.id)))).toEqual(snapshot);
    // And PATCH needs If-Match; a stale one is 412.
    expect((await send('PATCH', `/v1/tenants/${tid}/roles/${a.id}`, { description: 'x' })).status).toBe(428);
    expect((await send('PATCH', `/v1/tenants/${tid}/roles/${a.id}`, { description: 'x' }, { 'if-match': '"99"' })).status).toBe(412);
  });

  it('a parent from another tenant is refused; a duplicate name is 409 naming name, once', async () => {
    const theirs = await access.roles.create(ctx, other, { name: 'theirs', permissions: [] });
    const e = await access.roles.create(ctx, tid, { name: 'child', parentRoleId: theirs.id, permissions: [] }).catch((x) => x);
    expect(e).toMatchObject({ code: 'NOT_FOUND' });
    expect(fieldsOf(e)).toEqual(['parentRoleId']);
    await access.roles.create(ctx, tid, { name: 'dup', permissions: [] });
    const dup = await access.roles.create(ctx, tid, { name: 'dup', permissions: [] }).catch((x) => x);
    expect(dup).toMatchObject({ code: 'CONFLICT' });
    expect(fieldsOf(dup)).toEqual(['name']);
    expect((await rolesOfTenant(tid)).filter((r) => r.name === 'dup')).toHaveLength(1);
  });

  it('changing a parent recompiles its descendants in the same transaction', async () => {
    const root = await access.roles.create(ctx, tid, { name: 'root', permissions: [{ key: 'devices:read', effect: 'ALLOW' }] });
    const mid = await access.roles.create(ctx, tid, { name: 'mid', parentRoleId: root.id, permissions: [] });
    const leaf = await access.roles.create(ctx, tid, { name: 'leaf', parentRoleId: mid.id, permissions: [{ key: 'devices:write', effect: 'ALLOW' }] });
    expect(leaf.effectivePermissions.map((r) => r.key)).toEqual(['devices:write', 'devices:read']);
    await access.roles.update(ctx, tid, root.id, { permissions: [{ key: 'devices:read', effect: 'DENY' }] });
    const after = await access.roles.get(tid, leaf.id);
    expect(after.effectivePermissions).toEqual([
      { key: 'devices:write', effect: 'ALLOW', roleId: leaf.id },
      { key: 'devices:read', effect: 'DENY', roleId: root.id },
    ]);
    expect(after.ancestorIds).toEqual([mid.id, root.id]);
  });

  it('deleting a role still assigned is 409 with the count; cascade=true removes the assignments too', async () => {
    const r = await access.roles.create(ctx, tid, { name: 'temp', permissions: [{ key: 'devices:read', effect: 'ALLOW' }] });
    const u2 = await f.user(tid);
    await access.assignments.create(ctx, tid, { userId: uid, roleId: r.id, scope: building });
    await access.assignments.create(ctx, tid, { userId: u2, roleId: r.id, scope: building });
    const g = await access.groups.create(ctx, tid, { name: 'temp-group', scope: building, roleIds: [r.id] });
    const e = await access.roles.remove(ctx, tid, r.id).catch((x) => x);
    expect(e).toMatchObject({ code: 'CONFLICT', details: { assignments: 2, groups: 1 } });
    const http = await send('DELETE', `/v1/tenants/${tid}/roles/${r.id}`);
    expect(http).toMatchObject({ status: 409, body: { assignments: 2, groups: 1 } });
    expect(await access.roles.get(tid, r.id)).toMatchObject({ id: r.id });
    const done = await send('DELETE', `/v1/tenants/${tid}/roles/${r.id}?cascade=true`);
    expect(done).toMatchObject({ status: 200, body: { deleted: true, assignments: 2, groups: 1 } });
    expect((await userPartition(uid)).filter((i) => i.roleId === r.id)).toEqual([]);
    expect((await userPartition(u2)).filter((i) => i.roleId === r.id)).toEqual([]);
    expect((await access.groups.roles(tid, g.id)).items).toEqual([]);
    expect(await store.queryAll({ pk: keys.role(r.id).PK })).toEqual([]);
  });
});

describe('assignments', () => {
  it('a scope of another tenant is 404 naming scope, and nothing is written', async () => {
    const r = await access.roles.create(ctx, tid, { name: 'assignable', permissions: [{ key: 'devices:read', effect: 'ALLOW' }] });
    const before = await userPartition(uid);
    const e = await access.assignments.create(ctx, tid, { userId: uid, roleId: r.id, scope: foreignNode }).catch((x) => x);
    expect(e).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect(fieldsOf(e)).toEqual(['scope']);
    const asTenant = await access.assignments.create(ctx, tid, { userId: uid, roleId: r.id, scope: { kind: h.tenantKind, id: other } }).catch((x) => x);
    expect(fieldsOf(asTenant)).toEqual(['scope']);
    const http = await send('POST', `/v1/tenants/${tid}/assignments`, { userId: uid, roleId: r.id, scope: foreignNode });
    expect(http.status).toBe(404);
    expect(http.body.errors?.map((x) => x.field)).toEqual(['scope']);
    expect(await userPartition(uid)).toEqual(before);
    // A role of another tenant, and a user of another tenant, are refused the same way.
    const theirRole = await access.roles.create(ctx, other, { name: 'their-role', permissions: [] });
    expect(fieldsOf(await access.assignments.create(ctx, tid, { userId: uid, roleId: theirRole.id, scope: building }).catch((x) => x))).toEqual(['roleId']);
    const stranger = await f.user(other);
    expect(fieldsOf(await access.assignments.create(ctx, tid, { userId: stranger, roleId: r.id, scope: building }).catch((x) => x))).toEqual(['userId']);
  });

  it('a window with expiresAt <= startAt is 400 naming expiresAt, and nothing is written', async () => {
    const r = await access.roles.create(ctx, tid, { name: 'windowed', permissions: [{ key: 'devices:read', effect: 'ALLOW' }] });
    const before = await userPartition(uid);
    for (const [startAt, expiresAt] of [['2030-01-02T00:00:00Z', '2030-01-01T00:00:00Z'], ['2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z']]) {
      const e = await access.assignments.create(ctx, tid, { userId: uid, roleId: r.id, scope: building, startAt, expiresAt }).catch((x) => x);
      expect(fieldsOf(e)).toEqual(['expiresAt']);
    }
    const http = await send('POST', `/v1/tenants/${tid}/assignments`, { userId: uid, roleId: r.id, scope: building, startAt: '2030-01-02T00:00:00Z', expiresAt: '2030-01-01T00:00:00Z' });
    expect(http.status).toBe(400);
    expect(http.body.errors?.map((x) => x.field)).toEqual(['expiresAt']);
    expect(fieldsOf(await access.assignments.create(ctx, tid, { userId: uid, roleId: r.id, scope: building, startAt: 'not a date' }).catch((x) => x))).toEqual(['startAt']);
    expect(await userPartition(uid)).toEqual(before);
  });

  it('a valid window is stored with the TTL attribute and shown as expiresAt', async () => {
    const r = await access.roles.create(ctx, tid, { name: 'ttl', permissions: [{ key: 'devices:read', effect: 'ALLOW' }] });
    const created = await send('POST', `/v1/tenants/${tid}/assignments`, { userId: uid, roleId: r.id, scope: building, startAt: '2030-01-01T00:00:00Z', expiresAt: '2030-01-02T00:00:00Z' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ roleId: r.id, startAt: '2030-01-01T00:00:00.000Z', expiresAt: '2030-01-02T00:00:00.000Z', version: 1 });
    const stored = (await userPartition(uid)).find((i) => i.id === created.body.id)!;
    expect(stored.expiresAt).toBe(Date.parse('2030-01-02T00:00:00Z') / 1000);
    const again = await send('GET', `/v1/tenants/${tid}/assignments/${created.body.id}`);
    expect(again.body.id).toBe(created.body.id);
    expect((await send('GET', `/v1/tenants/${other}/assignments/${created.body.id}`)).status).toBe(404);
    expect((await send('DELETE', `/v1/tenants/${tid}/assignments/${created.body.id}`)).status).toBe(200);
    expect((await send('GET', `/v1/tenants/${tid}/assignments/${created.body.id}`)).status).toBe(404);
  });
});

describe('decisions over HTTP', () => {
  it('check, check-many and explain answer in shape; a scope of another tenant is 404', async () => {
    const r = await access.roles.create(ctx, tid, { name: 'http-reader', permissions: [{ key: 'devices:read', effect: 'ALLOW' }] });
    const u = await f.user(tid);
    await access.assignments.create(ctx, tid, { userId: u, roleId: r.id, scope: building });
    const yes = await send('POST', `/v1/tenants/${tid}/check`, { userId: u, permission: 'devices:read', scope: building });
    expect(yes).toMatchObject({ status: 200, body: { allowed: true, reason: 'allowed' } });
    const no = await send('POST', `/v1/tenants/${tid}/check`, { userId: u, permission: 'devices:write', scope: building });
    expect(no.body).toMatchObject({ allowed: false, reason: 'no-grant' });
    const many = await send('POST', `/v1/tenants/${tid}/check-many`, { userId: u, checks: [{ permission: 'devices:write', scope: building }, { permission: 'devices:read', scope: building }] });
    expect((many.body.results as { allowed: boolean }[]).map((x) => x.allowed)).toEqual([false, true]);
    const why = await send('POST', `/v1/tenants/${tid}/explain`, { userId: u, permission: 'devices:read', scope: building });
    expect(why.body).toMatchObject({ allowed: true, decidedBy: { type: 'assignment', roleId: r.id, rule: { key: 'devices:read', effect: 'ALLOW' } } });
    const foreign = await send('POST', `/v1/tenants/${tid}/check`, { userId: u, permission: 'devices:read', scope: foreignNode });
    expect(foreign.status).toBe(404);
    expect(foreign.body.errors?.map((x) => x.field)).toEqual(['scope']);
    const badKey = await send('POST', `/v1/tenants/${tid}/check`, { userId: u, permission: 'devices:*', scope: building });
    expect(badKey.status).toBe(400);
    expect(badKey.body.errors?.map((x) => x.field)).toEqual(['permission']);
    const perms = await send('GET', `/v1/tenants/${tid}/users/${u}/permissions?scopeKind=building&scopeId=${building.id}`);
    expect(perms.body).toMatchObject({ permissions: ['devices:read'], denied: [] });
    const scopes = await send('GET', `/v1/tenants/${tid}/users/${u}/scopes?permission=devices:read`);
    expect(scopes.body).toMatchObject({ items: [{ kind: 'building', id: building.id }], cursor: null });
    const doc = await (await app.request('/openapi.json')).json();
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/tenants/{tenantId}/check', '/v1/tenants/{tenantId}/roles/{roleId}', '/v1/permissions', '/v1/policies/{policyId}']));
  });
});
