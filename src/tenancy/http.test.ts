/**
 * The tenancy and identity HTTP API: shapes of the brief's §8, problem+json errors naming the
 * field, nothing half-written after a refused request, If-Match/ETag, tenant isolation through
 * the path, authorization on every /v1 route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../store/keys.ts';
import type { Item } from '../store/store.ts';
import { createKit, USER_TOKEN, type Kit } from './kit.test-util.ts';

let f: Kit; // facilities
let c: Kit; // chapters
let tenantId: string;
let otherId: string;
let projectId: string;
let buildingId: string;

async function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string, field?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code, type: expect.any(String), title: expect.any(String), detail: expect.any(String) });
  if (field) expect(res.body.errors?.map((e: { field: string }) => e.field)).toContain(field);
  return res.body;
}

/** Everything a refused write could have touched in a tenant: its partition, GSI1, audit shards. */
async function snapshot(k: Kit, T: string, tid: string, extra: { PK: string; SK: string }[] = []) {
  const [partition, entities, audits, guards] = await Promise.all([
    k.partition(`${T}#${tid}`),
    k.store.queryAll<Item>({ index: 'GSI1', pk: `${T}#${tid}` }),
    Promise.all(Array.from({ length: 16 }, (_, i) => k.partition(keys.auditShard(T, tid, i).pk))).then((a) => a.flat().length),
    Promise.all(extra.map((key) => k.get(key))),
  ]);
  return { partition: partition.map((i) => `${i.SK}@${i.version}`).sort(), entities: entities.map((i) => `${i.GSI1SK}@${i.version}`).sort(), audits, guards };
}

beforeAll(async () => {
  [f, c] = await Promise.all([createKit('facilities'), createKit('chapters')]);
  const t = await f.req('POST', '/v1/tenants', { name: 'Acme', attributes: { timezone: 'UTC' } });
  expect(t.status).toBe(201);
  tenantId = t.body.id;
  otherId = (await f.req('POST', '/v1/tenants', { name: 'Other' })).body.id;
  projectId = (await f.req('POST', `/v1/tenants/${tenantId}/scopes`, { kind: 'project', name: 'P' })).body.id;
  buildingId = (await f.req('POST', `/v1/tenants/${tenantId}/scopes`, { kind: 'building', parentId: projectId, name: 'B', attributes: { floors: 4 } })).body.id;
});
afterAll(async () => {
  await Promise.all([f?.t.drop(), c?.t.drop()]);
});

describe('§8 shapes', () => {
  it('POST /v1/tenants → 201 tenant; GET by id (ETag) and ?name=', async () => {
    const created = await f.req('POST', '/v1/tenants', { name: 'Shape Co' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^[0-9A-Z]{26}$/), kind: 'client', name: 'Shape Co', status: 'active', attributes: {}, version: 1, createdAt: expect.any(String), updatedAt: expect.any(String) });
    expect(created.headers.get('location')).toBe(`/v1/tenants/${created.body.id}`);
    const got = await f.req('GET', `/v1/tenants/${created.body.id}`);
    expect(got.body).toEqual(created.body);
    expect(got.headers.get('etag')).toBe('"1"');
    expect((await f.req('GET', '/v1/tenants?name=shape%20co')).body).toEqual({ items: [created.body], cursor: null });
    expect((await f.req('GET', '/v1/tenants?name=nope')).body).toEqual({ items: [], cursor: null });
    const page = await f.req('GET', '/v1/tenants?limit=2');
    expect(page.body.items).toHaveLength(2);
    expect(typeof page.body.cursor).toBe('string');
  });

  it('POST /scopes → 201 {id, kind, parentId, path, …}; GET node, children, descendants', async () => {
    const z = await f.req('POST', `/v1/tenants/${tenantId}/scopes`, { kind: 'zone', parentId: buildingId, name: 'Lobby', attributes: { type: 'lobby', geo_json: { type: 'Point', coordinates: [1, 2] } } });
    expect(z.status).toBe(201);
    expect(z.body).toMatchObject({
      id: expect.any(String),
      kind: 'zone',
      parentId: buildingId,
      path: [{ kind: 'client', id: tenantId }, { kind: 'project', id: projectId }, { kind: 'building', id: buildingId }],
      attributes: { type: 'lobby' },
      version: 1,
    });
    const got = await f.req('GET', `/v1/tenants/${tenantId}/scopes/${z.body.id}?kind=zone`);
    expect(got.body).toEqual(z.body);
    expect(got.headers.get('etag')).toBe('"1"');
    expect((await f.req('GET', `/v1/tenants/${tenantId}/scopes/${buildingId}/children`)).body.items.map((n: { id: string }) => n.id)).toEqual([z.body.id]);
    const desc = await f.req('GET', `/v1/tenants/${tenantId}/scopes/${projectId}/descendants`);
    expect(desc.body.items.map((n: { id: string }) => n.id)).toEqual([buildingId, z.body.id]);
    expect((await f.req('GET', `/v1/tenants/${tenantId}/scopes/${tenantId}/children`)).body.items.map((n: { id: string }) => n.id)).toEqual([projectId]);
    expect((await f.req('GET', `/v1/tenants/${tenantId}/scopes?kind=zone`)).body.items).toHaveLength(1);
    expect((await f.req('GET', `/v1/tenants/${tenantId}/scopes?sort=recent&kind=zone`)).body.items[0].id).toBe(z.body.id);
    expect((await f.req('GET', `/v1/tenants/${tenantId}/scopes`)).body.items.map((n: { kind: string }) => n.kind)).toEqual(['project', 'building', 'zone']);
    expect((await f.req('GET', `/v1/tenants/${tenantId}/entities`)).body.items.length).toBeGreaterThanOrEqual(3);
  });

  it('POST/GET users, GET users?email= (trimmed, lower-cased)', async () => {
    const u = await f.req('POST', `/v1/tenants/${tenantId}/users`, { email: '  Grace@Example.COM ', phone: '+44 20 7946 0958', username: 'Grace', firstName: 'Grace', lastName: 'Hopper', title: 'RAdm', endDate: '2030-01-01' });
    expect(u.status).toBe(201);
    expect(u.body).toMatchObject({ id: expect.any(String), tenantId, email: 'grace@example.com', phone: '+442079460958', username: 'grace', displayName: 'Grace Hopper', status: 'active', userType: 'internal', hasPassword: false, mfaEnabled: false });
    expect((await f.req('GET', `/v1/tenants/${tenantId}/users/${u.body.id}`)).body).toEqual(u.body);
    expect((await f.req('GET', `/v1/tenants/${tenantId}/users?email=GRACE@example.com`)).body).toEqual({ items: [u.body], cursor: null });
    expect((await f.req('GET', `/v1/tenants/${otherId}/users?email=grace@example.com`)).body).toEqual({ items: [], cursor: null });
    expect((await f.req('GET', `/v1/tenants/${tenantId}/users`)).body.items.map((x: { id: string }) => x.id)).toContain(u.body.id);
    expect((await f.req('GET', '/v1/users?status=active&endBefore=2031-01-01')).body.items.map((x: { id: string }) => x.id)).toContain(u.body.id);
  });
});

describe('bad input → 400/409 problem+json naming the field; nothing half-written', () => {
  it('unknown kind, wrong parent kind, missing parent, unknown / invalid / oversize attributes', async () => {
    const before = await snapshot(f, 'CLIENT', tenantId);
    const post = (body: unknown) => f.req('POST', `/v1/tenants/${tenantId}/scopes`, body);
    await expectProblem(await post({ kind: 'floor', name: 'x' }), 400, 'VALIDATION', 'kind');
    await expectProblem(await post({ kind: 'zone', parentId: projectId, name: 'x' }), 400, 'VALIDATION', 'parentId');
    await expectProblem(await post({ kind: 'building', name: 'x' }), 400, 'VALIDATION', 'parentId');
    await expectProblem(await post({ kind: 'building', parentId: projectId, name: 'x', attributes: { colour: 'red' } }), 400, 'VALIDATION', 'attributes.colour');
    await expectProblem(await post({ kind: 'building', parentId: projectId, name: 'x', attributes: { floors: 2.5 } }), 400, 'VALIDATION', 'attributes.floors');
    await expectProblem(await post({ kind: 'building', parentId: projectId, name: 'x', attributes: { address: 'y'.repeat(501) } }), 400, 'VALIDATION', 'attributes.address');
    await expectProblem(await post({ kind: 'zone', parentId: buildingId, name: 'x', attributes: { geo_json: { blob: 'z'.repeat(20_000) } } }), 400, 'VALIDATION', 'attributes.geo_json');
    await expectProblem(await post({ kind: 'project', name: 'x', attributes: { description: 'd'.repeat(2000), region: 'r'.repeat(100), owner_user_id: 'o'.repeat(64) }, extra: 1 }), 400, 'VALIDATION', 'extra');
    await expectProblem(await post({ kind: 'project', name: '' }), 400, 'VALIDATION', 'name');
    await expectProblem(await f.req('POST', `/v1/tenants/${otherId}/scopes`, { kind: 'building', parentId: projectId, name: 'x' }), 404, 'NOT_FOUND', 'parentId');
    await expectProblem(await f.req('POST', `/v1/tenants/NOPE/scopes`, { kind: 'project', name: 'x' }), 404, 'NOT_FOUND');
    expect(await snapshot(f, 'CLIENT', tenantId)).toEqual(before);
    expect((await f.req('GET', `/v1/tenants/${otherId}/scopes`)).body.items).toEqual([]);
  });

  it('malformed e-mail / phone / username / date → 400 naming the field', async () => {
    const before = await snapshot(f, 'CLIENT', tenantId, [keys.email('ok@example.com')]);
    const post = (body: unknown) => f.req('POST', `/v1/tenants/${tenantId}/users`, body);
    await expectProblem(await post({ email: 'not-an-email' }), 400, 'VALIDATION', 'email');
    await expectProblem(await post({}), 400, 'VALIDATION', 'email');
    await expectProblem(await post({ email: 'ok@example.com', phone: '555-0100' }), 400, 'VALIDATION', 'phone');
    await expectProblem(await post({ email: 'ok@example.com', phone: '+0123' }), 400, 'VALIDATION', 'phone');
    await expectProblem(await post({ email: 'ok@example.com', username: 'a b' }), 400, 'VALIDATION', 'username');
    await expectProblem(await post({ email: 'ok@example.com', endDate: '31/12/2030' }), 400, 'VALIDATION', 'endDate');
    await expectProblem(await post({ email: 'ok@example.com', status: 'gone' }), 400, 'VALIDATION', 'status');
    await expectProblem(await post({ email: 'ok@example.com', password: 'short' }), 400, 'VALIDATION', 'password');
    await expectProblem(await post({ email: 'ok@example.com', isAdmin: true }), 400, 'VALIDATION', 'isAdmin');
    expect(await snapshot(f, 'CLIENT', tenantId, [keys.email('ok@example.com')])).toEqual(before);
  });

  it('duplicate tenant name / e-mail / phone / username → 409 naming the field, no guard or user written', async () => {
    await expectProblem(await f.req('POST', '/v1/tenants', { name: ' ACME ' }), 409, 'CONFLICT', 'name');
    const first = await f.req('POST', `/v1/tenants/${tenantId}/users`, { email: 'dup@example.com', phone: '+15550000001', username: 'dupe' });
    expect(first.status).toBe(201);
    const guards = [keys.email('other@example.com'), keys.phone('+15550000002'), keys.username('other')];
    const before = await snapshot(f, 'CLIENT', tenantId, guards);
    const post = (body: unknown) => f.req('POST', `/v1/tenants/${tenantId}/users`, body);
    await expectProblem(await post({ email: 'DUP@example.com', phone: '+15550000002', username: 'other' }), 409, 'CONFLICT', 'email');
    await expectProblem(await post({ email: 'other@example.com', phone: '+1 555 000 0001', username: 'other' }), 409, 'CONFLICT', 'phone');
    await expectProblem(await post({ email: 'other@example.com', phone: '+15550000002', username: 'DUPE' }), 409, 'CONFLICT', 'username');
    expect(await snapshot(f, 'CLIENT', tenantId, guards)).toEqual(before);
    expect(before.guards).toEqual([undefined, undefined, undefined]);
  });

  it('duplicate location code → 409 naming attributes.code, nothing written', async () => {
    const t = (await c.req('POST', '/v1/tenants', { name: 'Chapters' })).body.id;
    const a = await c.req('POST', `/v1/tenants/${t}/scopes`, { kind: 'location', name: 'NYC', attributes: { code: 'NYC001' } });
    expect(a.status).toBe(201);
    expect(a.body.code).toBe('NYC001');
    const before = await snapshot(c, 'TENANT', t);
    await expectProblem(await c.req('POST', `/v1/tenants/${t}/scopes`, { kind: 'location', name: 'NYC 2', attributes: { code: 'nyc001' } }), 409, 'CONFLICT', 'attributes.code');
    await expectProblem(await c.req('POST', `/v1/tenants/${t}/scopes`, { kind: 'location', name: 'No code' }), 400, 'VALIDATION', 'attributes.code');
    await expectProblem(await c.req('POST', `/v1/tenants/${t}/scopes`, { kind: 'location', name: 'Bad', attributes: { code: 'has space' } }), 400, 'VALIDATION', 'attributes.code');
    expect(await snapshot(c, 'TENANT', t)).toEqual(before);
    expect((await c.req('GET', `/v1/tenants/${t}/scopes?code=nyc001`)).body.items.map((n: { id: string }) => n.id)).toEqual([a.body.id]);
    // Members of a location over HTTP.
    const u = await c.req('POST', `/v1/tenants/${t}/users`, { email: 'm@chapters.example', firstName: 'Mo' });
    const put = await c.req('PUT', `/v1/tenants/${t}/scopes/${a.body.id}/members/${u.body.id}?kind=location`);
    expect(put.status).toBe(201);
    expect((await c.req('PUT', `/v1/tenants/${t}/scopes/${a.body.id}/members/${u.body.id}`)).status).toBe(200);
    expect((await c.req('GET', `/v1/tenants/${t}/scopes/${a.body.id}/members?kind=location`)).body.items.map((m: { userId: string }) => m.userId)).toEqual([u.body.id]);
    expect((await c.req('GET', `/v1/tenants/${t}/users/${u.body.id}/memberships?kind=location`)).body.items.map((m: { scopeCode: string }) => m.scopeCode)).toEqual(['NYC001']);
    await expectProblem(await c.req('DELETE', `/v1/tenants/${t}/scopes/${a.body.id}`, undefined, { 'if-match': '"1"' }), 409, 'CONFLICT', 'members');
    expect((await c.req('DELETE', `/v1/tenants/${t}/scopes/${a.body.id}/members/${u.body.id}`)).status).toBe(204);
    expect((await c.req('DELETE', `/v1/tenants/${t}/scopes/${a.body.id}`, undefined, { 'if-match': '"1"' })).status).toBe(204);
    expect(await c.get(keys.locationCode('NYC001'))).toBeUndefined();
  });
});

describe('If-Match / ETag', () => {
  it('PATCH and DELETE need If-Match (428); a stale one is 412; a current one succeeds with the new ETag', async () => {
    const path = `/v1/tenants/${tenantId}/scopes/${buildingId}`;
    await expectProblem(await f.req('PATCH', path, { name: 'B2' }), 428, 'PRECONDITION_REQUIRED');
    await expectProblem(await f.req('DELETE', path), 428, 'PRECONDITION_REQUIRED');
    await expectProblem(await f.req('PATCH', path, { name: 'B2' }, { 'if-match': '"9"' }), 412, 'PRECONDITION_FAILED');
    const ok = await f.req('PATCH', path, { name: 'B2', attributes: { floors: 5 } }, { 'if-match': '"1"' });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ name: 'B2', version: 2, attributes: { floors: 5 } });
    expect(ok.headers.get('etag')).toBe('"2"');
    await expectProblem(await f.req('PATCH', path, { name: 'B3' }, { 'if-match': '"1"' }), 412, 'PRECONDITION_FAILED');
    await expectProblem(await f.req('PATCH', path, { attributes: { floors: 'x' } }, { 'if-match': '"2"' }), 400, 'VALIDATION', 'attributes.floors');
    const t = await f.req('PATCH', `/v1/tenants/${tenantId}`, { attributes: { timezone: 'Europe/Paris' } }, { 'if-match': '"1"' });
    expect(t.body).toMatchObject({ version: 2, attributes: { timezone: 'Europe/Paris' } });
  });

  it('users: PATCH moves guards; DELETE frees them', async () => {
    const u = await f.req('POST', `/v1/tenants/${tenantId}/users`, { email: 'temp@example.com', username: 'temp' });
    const p = await f.req('PATCH', `/v1/tenants/${tenantId}/users/${u.body.id}`, { email: 'temp2@example.com' }, { 'if-match': u.headers.get('etag')! });
    expect(p.status).toBe(200);
    expect(p.body.email).toBe('temp2@example.com');
    await expectProblem(await f.req('DELETE', `/v1/tenants/${tenantId}/users/${u.body.id}`, undefined, { 'if-match': '"1"' }), 412, 'PRECONDITION_FAILED');
    expect((await f.req('DELETE', `/v1/tenants/${tenantId}/users/${u.body.id}`, undefined, { 'if-match': '"2"' })).status).toBe(204);
    for (const key of [keys.user(u.body.id), keys.email('temp2@example.com'), keys.username('temp')]) expect(await f.get(key)).toBeUndefined();
  });
});

describe('isolation and authorization', () => {
  it("another tenant's node or user is 404 through this tenant's path", async () => {
    const u = (await f.req('POST', `/v1/tenants/${tenantId}/users`, { email: 'iso@example.com' })).body;
    await expectProblem(await f.req('GET', `/v1/tenants/${otherId}/scopes/${buildingId}`), 404, 'NOT_FOUND');
    await expectProblem(await f.req('GET', `/v1/tenants/${tenantId}/scopes/${tenantId}?kind=client`), 404, 'NOT_FOUND');
    await expectProblem(await f.req('GET', `/v1/tenants/${tenantId}/scopes/${buildingId}?kind=floor`), 400, 'VALIDATION', 'kind');
    await expectProblem(await f.req('GET', `/v1/tenants/${otherId}/scopes/${buildingId}/children`), 404, 'NOT_FOUND');
    await expectProblem(await f.req('PATCH', `/v1/tenants/${otherId}/scopes/${buildingId}`, { name: 'x' }, { 'if-match': '"2"' }), 404, 'NOT_FOUND');
    await expectProblem(await f.req('GET', `/v1/tenants/${otherId}/users/${u.id}`), 404, 'NOT_FOUND');
    await expectProblem(await f.req('PATCH', `/v1/tenants/${otherId}/users/${u.id}`, { firstName: 'x' }, { 'if-match': '"1"' }), 404, 'NOT_FOUND');
    await expectProblem(await f.req('PUT', `/v1/tenants/${otherId}/scopes/${buildingId}/members/${u.id}`), 404, 'NOT_FOUND');
    // A grant makes the user visible in the other tenant (read-only there); a user of another
    // tenant is added with its e-mail, never by id alone (the same 404 as an unknown id).
    await expectProblem(await f.req('PUT', `/v1/tenants/${otherId}/members/${u.id}`, { roleIds: [] }), 404, 'NOT_FOUND', 'userId');
    const g = await f.req('PUT', `/v1/tenants/${otherId}/members/${u.id}`, { roleIds: [], email: 'ISO@example.com' });
    expect(g.status).toBe(201);
    expect((await f.req('GET', `/v1/tenants/${otherId}/users/${u.id}`)).status).toBe(200);
    expect((await f.req('GET', `/v1/tenants/${otherId}/members/${u.id}`)).body).toMatchObject({ id: g.body.id, tenantId: otherId });
    expect((await f.req('GET', `/v1/tenants/${otherId}/grants/${g.body.id}`)).body).toMatchObject({ userId: u.id });
    await expectProblem(await f.req('GET', `/v1/tenants/${tenantId}/grants/${g.body.id}`), 404, 'NOT_FOUND');
    expect((await f.req('GET', `/v1/tenants/${tenantId}/users/${u.id}/tenants`)).body.items.map((x: { tenantId: string }) => x.tenantId)).toEqual([otherId]);
    await expectProblem(await f.req('PATCH', `/v1/tenants/${otherId}/users/${u.id}`, { firstName: 'x' }, { 'if-match': '"1"' }), 404, 'NOT_FOUND');
    expect((await f.req('DELETE', `/v1/tenants/${otherId}/members/${u.id}`)).status).toBe(204);
  });

  it('every /v1 route answers 401 without credentials and 403 to a caller lacking the permission', async () => {
    const doc = (await f.req('GET', '/openapi.json')).body;
    const routes = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .filter(([p]) => p.startsWith('/v1/'))
      .flatMap(([p, ops]) => Object.keys(ops).map((m) => [m.toUpperCase(), p.replace(/\{[^}]+\}/g, '01J8Z0E2Z8D2A3J7A7Y2H9GQ9C')] as const));
    expect(routes.length).toBeGreaterThan(40);
    for (const [method, path] of routes) {
      const anon = await f.app.request(path, { method });
      expect(anon.status, `${method} ${path}`).toBe(401);
      const plain = await f.app.request(path, { method, headers: { authorization: `Bearer ${USER_TOKEN}` } });
      expect(plain.status, `${method} ${path}`).toBe(403);
    }
  });

  it('the OpenAPI document has the tenancy and identity routes with their schemas', async () => {
    const doc = (await f.req('GET', '/openapi.json')).body;
    for (const p of ['/v1/tenants', '/v1/tenants/{tenantId}', '/v1/tenants/{tenantId}/scopes', '/v1/tenants/{tenantId}/scopes/{scopeId}/descendants', '/v1/tenants/{tenantId}/users', '/v1/tenants/{tenantId}/members/{userId}', '/v1/tenants/{tenantId}/addresses', '/v1/products']) {
      expect(doc.paths[p], p).toBeDefined();
    }
    for (const s of ['Tenant', 'Scope', 'User', 'Membership', 'TenantGrant', 'CreateUser']) expect(doc.components.schemas[s], s).toBeDefined();
    const userFields = Object.keys(doc.components.schemas.User.properties);
    for (const secret of ['password', 'passwordHash', 'mfaSecret']) expect(userFields).not.toContain(secret);
    // Chapters declares no tools: no tool routes in its document.
    const cdoc = (await c.req('GET', '/openapi.json')).body;
    expect(Object.keys(cdoc.paths).some((p) => p.includes('/tools'))).toBe(false);
  });
});
