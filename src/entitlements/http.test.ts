import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import type { Hierarchy, ScopeNodeRecord, TenantRecord } from '../tenancy/model.ts';
import { buildTestApp } from './app.test-util.ts';
import { adminCtx, facilities, putNode, putTenant, putUser } from './fixtures.test-util.ts';

let t: TestTable;
let h: Hierarchy;
let api: ReturnType<typeof buildTestApp>;
let tenant: TenantRecord;
let project: ScopeNodeRecord;
let building: ScopeNodeRecord;
const ctx = adminCtx();
const days = (n: number) => new Date(Date.now() + n * 86400_000).toISOString();

beforeAll(async () => {
  t = await createTestTable();
  h = facilities();
  api = buildTestApp(t, h);
  tenant = await putTenant(api.store, h, 'Http Co');
  project = await putNode(api.store, h, tenant.id, 'project');
  building = await putNode(api.store, h, tenant.id, 'building', project);
  await api.ent.products.create(ctx, { id: 'core', name: 'Core' });
});
afterAll(() => t?.drop());

const T = () => `/v1/tenants/${tenant.id}`;

describe('entitlement HTTP API', () => {
  it('is in the OpenAPI document with its permissions declared', async () => {
    const doc = (await (await api.app.request('/openapi.json')).json()) as { paths: Record<string, Record<string, { security?: unknown; tags?: string[] }>> };
    for (const p of [
      '/v1/tenants/{tenantId}/licenses', '/v1/tenants/{tenantId}/licenses/{licenseId}/seats/{userId}', '/v1/licenses',
      '/v1/tenants/{tenantId}/subscriptions', '/v1/modules/{moduleId}/subscriptions', '/v1/tenants/{tenantId}/settings/{kind}/{scopeId}/{key}',
      '/v1/tenants/{tenantId}/effective-settings/{kind}/{scopeId}', '/v1/tenants/{tenantId}/audit', '/v1/tenants/{tenantId}/audit/export',
      '/v1/tenants/{tenantId}/users/{userId}/activity', '/v1/notifications', '/v1/tenants/{tenantId}/notifications', '/v1/outbox',
      '/v1/tenants/{tenantId}/users/{userId}/sessions', '/v1/tenants/{tenantId}/users/{userId}/tokens',
    ]) expect(Object.keys(doc.paths)).toContain(p);
    expect(doc.paths['/v1/tenants/{tenantId}/licenses'].post.security).toEqual([{ bearerAuth: [] }]);
    expect(api.ent.permissions).toEqual(expect.arrayContaining(['gatehouse:licenses:read', 'gatehouse:licenses:write', 'gatehouse:settings:write', 'gatehouse:audit:read', 'gatehouse:sessions:write', 'gatehouse:platform:admin']));
    const unauth = await api.app.request(`${T()}/licenses`);
    expect(unauth.status).toBe(401);
  });

  it('licenses and seats: 201 with ETag, If-Match 412, 409 seats, 422 license, 400 naming fields', async () => {
    const created = await api.call('POST', `${T()}/licenses`, { productId: 'core', seats: 1, startDate: '2025-01-01', endDate: days(30) });
    expect(created.status).toBe(201);
    expect(created.headers.get('etag')).toBe('"1"');
    const id = created.json.id as string;
    const bad = await api.call('POST', `${T()}/licenses`, { productId: 'core', seats: 0, startDate: '2025-01-01', endDate: days(30) });
    expect(bad.status).toBe(400);
    expect(bad.json.errors).toEqual([expect.objectContaining({ field: 'seats' })]);
    const stale = await api.call('PATCH', `${T()}/licenses/${id}`, { seats: 2 }, { 'if-match': '"7"' });
    expect(stale.status).toBe(412);
    expect((await api.call('PATCH', `${T()}/licenses/${id}`, { seats: 2 }, { 'if-match': '"1"' })).headers.get('etag')).toBe('"2"');
    const [u1, u2, u3] = await Promise.all([1, 2, 3].map(() => putUser(api.store, h, tenant.id)));
    expect((await api.call('PUT', `${T()}/licenses/${id}/seats/${u1.id}`)).status).toBe(201);
    expect((await api.call('PUT', `${T()}/licenses/${id}/seats/${u2.id}`)).status).toBe(201);
    const full = await api.call('PUT', `${T()}/licenses/${id}/seats/${u3.id}`);
    expect(full.status).toBe(409);
    expect(full.json).toMatchObject({ code: 'CONFLICT', errors: [{ field: 'seats' }], seats: 2, seatsUsed: 2 });
    const expired = await api.call('POST', `${T()}/licenses`, { productId: 'core', seats: 3, startDate: '2024-01-01', endDate: '2024-12-31' });
    const onExpired = await api.call('PUT', `${T()}/licenses/${expired.json.id}/seats/${u3.id}`);
    expect(onExpired.status).toBe(422);
    expect(onExpired.json).toMatchObject({ code: 'UNPROCESSABLE', errors: [{ field: 'license' }] });
    expect((await api.call('GET', `${T()}/licenses/${id}/seats`)).json.items).toHaveLength(2);
    const expiring = await api.call('GET', `/v1/licenses?endingBefore=${encodeURIComponent(days(31))}`);
    expect(expiring.json.items!.map((l) => l.id)).toContain(id);
    expect((await api.call('GET', `/v1/licenses?productId=core`)).json.items!.length).toBeGreaterThanOrEqual(2);
    expect((await api.call('GET', `/v1/licenses`)).status).toBe(400);
  });

  it('settings: 400 value type, 409 locked key, effective with explain', async () => {
    const put = (scope: string, key: string, body: unknown) => api.call('PUT', `${T()}/settings/${scope}/${key}`, body);
    expect((await put(`client/${tenant.id}`, 'units', { value: 'metric', valueType: 'string', isOverridable: false })).status).toBe(200);
    expect((await put(`project/${project.id}`, 'floors', { value: 3, valueType: 'number' })).status).toBe(200);
    const wrong = await put(`building/${building.id}`, 'floors', { value: 'three', valueType: 'number' });
    expect(wrong.status).toBe(400);
    expect(wrong.json.errors).toEqual([expect.objectContaining({ field: 'value' })]);
    const locked = await put(`building/${building.id}`, 'units', { value: 'imperial', valueType: 'string' });
    expect(locked.status).toBe(409);
    expect(locked.json).toMatchObject({ errors: [{ field: 'key' }], lockedBy: { kind: 'client', id: tenant.id } });
    const badType = await put(`building/${building.id}`, 'x', { value: 1, valueType: 'decimal' });
    expect(badType.status).toBe(400);
    expect(badType.json.errors![0].field).toBe('valueType');
    const eff = await api.call('GET', `${T()}/effective-settings/building/${building.id}?explain=true`);
    expect(eff.status).toBe(200);
    expect(eff.json).toMatchObject({ settings: { units: { value: 'metric', source: { kind: 'client' } }, floors: { value: 3, source: { kind: 'project' } } } });
    expect((eff.json.explain as Record<string, unknown[]>).floors).toHaveLength(1);
    expect((await api.call('GET', `${T()}/settings/project/${project.id}`)).json.items).toHaveLength(1);
  });

  it('subscriptions by scope and module', async () => {
    const s = await api.call('POST', `${T()}/subscriptions`, { scope: { kind: 'building', id: building.id }, moduleId: 'hvac', usageQuota: { zones: 4 } });
    expect(s.status).toBe(201);
    expect((await api.call('GET', `${T()}/subscriptions?scopeKind=building&scopeId=${building.id}&status=active`)).json.items).toHaveLength(1);
    expect((await api.call('GET', `${T()}/modules/hvac/subscriptions`)).json.items).toHaveLength(1);
    expect((await api.call('GET', `/v1/modules/hvac/subscriptions`)).json.items).toHaveLength(1);
    expect((await api.call('GET', `${T()}/subscriptions/${s.json.id}`)).headers.get('etag')).toBe('"1"');
  });

  it('audit: range, activity, and export streamed as JSON Lines and CSV', async () => {
    const page = await api.call('GET', `${T()}/audit?limit=5`);
    expect(page.status).toBe(200);
    expect(page.json.items).toHaveLength(5);
    expect(page.json.cursor).toEqual(expect.any(String));
    const next = await api.call('GET', `${T()}/audit?limit=5&cursor=${encodeURIComponent(page.json.cursor as string)}`);
    expect(String(next.json.items![0].at) <= String(page.json.items![4].at)).toBe(true);
    expect((await api.call('GET', `${T()}/audit?limit=5&cursor=abc.def`)).status).toBe(400);
    expect((await api.call('GET', `${T()}/audit?from=notadate`)).json.errors![0].field).toBe('from');

    const res = await api.app.request(`${T()}/audit/export?format=jsonl`, { headers: { authorization: 'Bearer user:admin-1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    expect(res.headers.get('content-disposition')).toContain('.jsonl');
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
    const all = (await api.call('GET', `${T()}/audit?limit=100`)).json.items!;
    expect(lines.map((l) => l.id)).toEqual(all.map((r) => r.id));
    const csv = await api.app.request(`${T()}/audit/export?format=csv`, { headers: { authorization: 'Bearer user:admin-1' } });
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const rows = (await csv.text()).trim().split('\r\n');
    expect(rows[0].startsWith('at,id,tenantId,actorId')).toBe(true);
    expect(rows).toHaveLength(all.length + 1);

    const activity = await api.call('GET', `${T()}/users/admin-1/activity?limit=100`);
    expect(activity.json.items!.length).toBe(all.filter((r) => r.actorId === 'admin-1').length);
    expect(activity.json.items!.every((r) => r.tenantId === tenant.id)).toBe(true);
  });

  it('sessions and tokens over HTTP; the secret is shown once', async () => {
    const u = await putUser(api.store, h, tenant.id);
    const s = await api.call('POST', `${T()}/users/${u.id}/sessions`, { ssoProvider: 'okta' });
    expect(s.status).toBe(201);
    const tok = await api.call('POST', `${T()}/users/${u.id}/tokens`, { tokenType: 'api' });
    expect(tok.json.secret).toEqual(expect.any(String));
    expect(tok.headers.get('cache-control')).toBe('no-store');
    const list = await api.call('GET', `${T()}/users/${u.id}/tokens`);
    expect(list.text).not.toContain(tok.json.secret as string);
    expect((await api.call('GET', `${T()}/users/${u.id}/sessions`)).json.items).toHaveLength(1);
    expect((await api.call('POST', `${T()}/users/${u.id}/sessions/revoke-all`)).status).toBe(200);
    expect((await api.call('GET', `${T()}/users/${u.id}/sessions`)).json.items).toHaveLength(0);
    expect((await api.call('GET', `${T()}/users/${u.id}/sessions/${s.json.id}`)).status).toBe(404);
  });

  it('notifications and the outbox', async () => {
    await putUser(api.store, h, tenant.id, { userType: 'client_admin', email: 'boss@http.test' });
    const summary = await api.ent.jobs.licenseExpiry({ within: '60d' });
    expect(summary.sent).toBeGreaterThan(0);
    const out = await api.call('GET', `/v1/outbox?tenantId=${tenant.id}`);
    expect(out.json.items!.length).toBe(summary.sent);
    expect((await api.call('GET', '/v1/notifications?status=sent')).json.items!.length).toBe(summary.sent);
    expect((await api.call('GET', `${T()}/notifications`)).json.items!.length).toBe(summary.notices.filter((n) => n.tenantId === tenant.id).length);
    expect((await api.call('GET', '/v1/notifications?status=bogus')).status).toBe(400);
  });
});
