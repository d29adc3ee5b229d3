/** The access routes end to end (HTTP → services → DynamoDB Local), and the demo seed. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { seedAccessDemo } from '../demo/access.ts';
import { createApp } from '../http/app.ts';
import type { RouteModule } from '../http/deps.ts';
import { createLogger } from '../http/logger.ts';
import type { ScopeRef } from '../tenancy/model.ts';
import { accessOn, ctx, facilities, fixtures, storeOf } from './fixtures.test-util.ts';
import { accessRoutes, type Access } from './index.ts';

const h = facilities();
let t: TestTable;
let access: Access;
let f: ReturnType<typeof fixtures>;
let app: ReturnType<typeof createApp>;
let tid: string;
let project: ScopeRef;
let building: ScopeRef;
let device: ScopeRef;
let u1: string;
let u2: string;

const asAdmin: RouteModule = (a) => {
  a.use('/v1/*', async (c, next) => {
    c.set('principal', { actor: { id: 'test-admin', type: 'apiKey' }, platformAdmin: true });
    await next();
  });
};

beforeAll(async () => {
  t = await createTestTable();
  const store = storeOf(t);
  f = fixtures(store, h);
  access = await accessOn(store, h);
  app = createApp({ version: 'test', dynamoEndpoint: 'local', tableName: t.tableName, logger: createLogger('silent'), routes: [asAdmin, accessRoutes(access)] });
  tid = await f.tenant();
  project = await f.node(tid, 'project');
  building = await f.node(tid, 'building', project);
  device = await f.node(tid, 'device', building);
  u1 = await f.user(tid);
  u2 = await f.user(tid);
  await access.permissions.ensure(ctx, [{ key: 'devices:read' }, { key: 'devices:write' }]);
}, 60_000);
afterAll(() => t?.drop());

type Body = Record<string, any>;
async function send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await app.request(path, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Body, etag: res.headers.get('etag') };
}

describe('the demo seed', () => {
  it('is idempotent and yields one allowed and one denied check', async () => {
    const ids = { tenantId: tid, scopes: [project, building, device], userIds: [u1, u2] };
    const first = await seedAccessDemo(access, ctx, ids);
    const second = await seedAccessDemo(access, ctx, ids);
    expect(second).toEqual(first);
    const yes = await send('POST', `/v1/tenants/${tid}/check`, first.checks.allowed);
    expect(yes.body).toMatchObject({ allowed: true, reason: 'allowed' });
    const no = await send('POST', `/v1/tenants/${tid}/check`, first.checks.denied);
    expect(no.body).toMatchObject({ allowed: false, reason: 'denied-by-rule' });
    const viewer = await send('POST', `/v1/tenants/${tid}/check`, { userId: u2, permission: 'devices:read', scope: device });
    expect(viewer.body.allowed).toBe(true);
    expect((await send('GET', `/v1/tenants/${tid}/users/${u2}/can-access-page?page=dashboard&scopeKind=device&scopeId=${device.id}`)).body).toEqual({ allowed: true });
    expect((await send('GET', `/v1/tenants/${tid}/users/${u2}/can-access-page?page=reports&scopeKind=device&scopeId=${device.id}`)).body).toEqual({ allowed: false });
    expect((await send('GET', `/v1/tenants/${tid}/roles`)).body.items).toHaveLength(2);
  });
});

describe('routes', () => {
  it('permission catalog: create (201, Location), duplicate (409), list, one', async () => {
    const created = await send('POST', '/v1/permissions', { key: 'reports:export', description: 'Export reports', isDangerous: true });
    expect(created).toMatchObject({ status: 201, body: { key: 'reports:export', module: 'reports', action: 'export', isDangerous: true, version: 1 } });
    const dup = await send('POST', '/v1/permissions', { key: 'reports:export' });
    expect(dup.status).toBe(409);
    expect(dup.body.errors[0].field).toBe('key');
    expect((await send('POST', '/v1/permissions', { key: 'reports:*' })).status).toBe(400);
    expect((await send('GET', '/v1/permissions?prefix=reports:')).body.items.map((p: Body) => p.key)).toEqual(['reports:export']);
    expect((await send('GET', '/v1/permissions/reports:export')).body.key).toBe('reports:export');
  });

  it('global roles: slug id, ETag, PATCH with If-Match, DELETE', async () => {
    const created = await send('POST', '/v1/roles', { id: 'site-viewer', name: 'site-viewer', permissions: [{ key: 'devices:read', effect: 'ALLOW' }] });
    expect(created).toMatchObject({ status: 201, etag: '"1"', body: { id: 'site-viewer', scope: 'global' } });
    expect((await send('GET', '/v1/roles/site-viewer')).body.name).toBe('site-viewer');
    const patched = await send('PATCH', '/v1/roles/site-viewer', { description: 'Sees sites' }, { 'if-match': '"1"' });
    expect(patched).toMatchObject({ status: 200, etag: '"2"', body: { description: 'Sees sites', version: 2 } });
    const tenantView = await send('GET', `/v1/tenants/${tid}/roles/site-viewer`);
    expect(tenantView.body.scope).toBe('global');
    expect((await send('DELETE', '/v1/roles/site-viewer', undefined, { 'if-match': '"1"' })).status).toBe(412);
    expect((await send('DELETE', '/v1/roles/site-viewer')).body).toMatchObject({ deleted: true, assignments: 0 });
    expect((await send('GET', '/v1/roles/site-viewer')).status).toBe(404);
  });

  it('groups: create, members, roles, groups of a user, delete', async () => {
    const u1 = await f.user(tid); // not the demo's users
    const role = await send('POST', `/v1/tenants/${tid}/roles`, { name: 'tech', permissions: [{ key: 'devices:write', effect: 'ALLOW' }] });
    expect(role.status).toBe(201);
    const g = await send('POST', `/v1/tenants/${tid}/groups`, { name: 'Techs', scope: building, roleIds: [role.body.id] });
    expect(g).toMatchObject({ status: 201, body: { name: 'Techs', scope: building, roleIds: [role.body.id] } });
    const gid = g.body.id;
    expect((await send('PUT', `/v1/tenants/${tid}/groups/${gid}/members/${u1}`)).body).toMatchObject({ groupId: gid, userId: u1, scope: building });
    expect((await send('PUT', `/v1/tenants/${tid}/groups/${gid}/members/${u1}`)).status).toBe(200); // idempotent
    expect((await send('GET', `/v1/tenants/${tid}/groups/${gid}/members`)).body.items.map((m: Body) => m.userId)).toEqual([u1]);
    expect((await send('GET', `/v1/tenants/${tid}/users/${u1}/groups?scopeKind=building&scopeId=${building.id}`)).body.items.map((m: Body) => m.groupId)).toEqual([gid]);
    expect((await send('POST', `/v1/tenants/${tid}/check`, { userId: u1, permission: 'devices:write', scope: device })).body.allowed).toBe(true);
    expect((await send('DELETE', `/v1/tenants/${tid}/groups/${gid}/roles/${role.body.id}`)).status).toBe(200);
    expect((await send('GET', `/v1/tenants/${tid}/groups/${gid}/roles`)).body.items).toEqual([]);
    expect((await send('POST', `/v1/tenants/${tid}/check`, { userId: u1, permission: 'devices:write', scope: device })).body.allowed).toBe(false);
    expect((await send('PUT', `/v1/tenants/${tid}/groups/${gid}/roles/${role.body.id}`)).status).toBe(200);
    expect((await send('POST', `/v1/tenants/${tid}/check`, { userId: u1, permission: 'devices:write', scope: device })).body.allowed).toBe(true);
    expect((await send('DELETE', `/v1/tenants/${tid}/groups/${gid}`)).body).toMatchObject({ deleted: true, members: 1 });
    expect((await send('POST', `/v1/tenants/${tid}/check`, { userId: u1, permission: 'devices:write', scope: device })).body.allowed).toBe(false);
    expect((await send('GET', `/v1/tenants/${tid}/users/${u1}/groups`)).body.items.filter((m: Body) => m.groupId === gid)).toEqual([]);
    expect((await send('GET', `/v1/tenants/${tid}/groups/${gid}`)).status).toBe(404);
  });

  it('assignments: list a user’s, who holds access at a scope; isolation by tenant', async () => {
    const role = await send('POST', `/v1/tenants/${tid}/roles`, { name: 'lister', permissions: [] });
    const a = await send('POST', `/v1/tenants/${tid}/assignments`, { userId: u2, roleId: role.body.id, scope: device });
    expect(a.status).toBe(201);
    expect((await send('POST', `/v1/tenants/${tid}/assignments`, { userId: u2, roleId: role.body.id, scope: device })).status).toBe(409);
    const mine = await send('GET', `/v1/tenants/${tid}/assignments?userId=${u2}`);
    expect(mine.body.items.map((x: Body) => x.id)).toContain(a.body.id);
    const atScope = await send('GET', `/v1/tenants/${tid}/assignments?scopeKind=device&scopeId=${device.id}`);
    expect(atScope.body.items.map((x: Body) => x.id)).toEqual([a.body.id]);
    const otherTenant = await f.tenant();
    expect((await send('GET', `/v1/tenants/${otherTenant}/assignments?userId=${u2}`)).body.items).toEqual([]);
    expect((await send('GET', `/v1/tenants/${tid}/assignments`)).status).toBe(400);
  });

  it('policies: create, by name, by prefix, by id, rename with If-Match, delete', async () => {
    const p = await send('POST', '/v1/policies', { name: 'orders-owner', id: 'pol-1', description: 'Owners see their orders' });
    expect(p).toMatchObject({ status: 201, body: { id: 'pol-1', name: 'orders-owner', version: 1 } });
    expect((await send('GET', '/v1/policies/by-name/orders-owner')).body.id).toBe('pol-1');
    expect((await send('GET', '/v1/policies?prefix=orders-')).body.items).toHaveLength(1);
    expect((await send('GET', '/v1/policies/pol-1')).body.name).toBe('orders-owner');
    expect((await send('PATCH', '/v1/policies/pol-1', { name: 'orders-owners' }, { 'if-match': '"7"' })).status).toBe(412);
    expect((await send('PATCH', '/v1/policies/pol-1', { name: 'orders-owners' }, { 'if-match': '"1"' })).body).toMatchObject({ name: 'orders-owners', version: 2 });
    expect((await send('DELETE', '/v1/policies/pol-1')).status).toBe(200);
    expect((await send('GET', '/v1/policies/by-name/orders-owners')).status).toBe(404);
  });
});
