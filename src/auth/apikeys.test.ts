import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { ADMIN_KEY, createKit, type Kit } from '../../test/isolation-kit.ts';
import { keys } from '../store/keys.ts';
import { createApp } from '../http/app.ts';
import { createLogger } from '../http/logger.ts';
import { createAuth } from './index.ts';
import { Store } from '../store/store.ts';
import { accessRoutes } from '../access/index.ts';
import { parseApiKey } from './apikeys.ts';

let t: TestTable;
let kit: Kit;
let A: { tenantId: string; userId: string; token: string };
let B: { tenantId: string; userId: string; token: string };

beforeAll(async () => {
  t = await createTestTable();
  kit = await createKit(t);
  [A, B] = await Promise.all([kit.tenantWithAdmin('Acme'), kit.tenantWithAdmin('Bolt')]);
});
afterAll(() => t?.drop());

const createKey = async (tenantId: string, roleId: string, as = ADMIN_KEY, extra: Record<string, unknown> = {}) => {
  const res = await kit.call(as, 'POST', `/v1/tenants/${tenantId}/api-keys`, { name: 'sync', roleId, ...extra });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: string; secret: string; prefix: string; version: number; tenantId: string };
};

describe('API keys', () => {
  it('are shown once, stored only hashed, prefix-identifiable', async () => {
    const k = await createKey(A.tenantId, 'tenant-admin', A.token);
    expect(k.secret).toMatch(/^gh_[0-9A-Z]{26}_[A-Za-z0-9_-]{43}$/);
    expect(k.prefix).toBe(`gh_${k.id}`);
    expect(k.secret.startsWith(k.prefix)).toBe(true);
    const secretPart = parseApiKey(k.secret)!.secret;
    const stored = await kit.store.get<Record<string, unknown>>(keys.apiKey(k.id));
    expect(JSON.stringify(stored)).not.toContain(secretPart);
    expect(stored?.secretHash).toMatch(/^[0-9a-f]{64}$/);
    const read = await kit.call(A.token, 'GET', `/v1/tenants/${A.tenantId}/api-keys/${k.id}`);
    expect(read.status).toBe(200);
    expect(read.headers.get('etag')).toBe(`"${k.version}"`);
    const body = await read.json();
    expect(body.secret).toBeUndefined();
    expect(JSON.stringify(body)).not.toContain(secretPart);
    const list = await (await kit.call(A.token, 'GET', `/v1/tenants/${A.tenantId}/api-keys`)).json();
    expect(list.items.map((i: { id: string }) => i.id)).toContain(k.id);
    expect(JSON.stringify(list)).not.toContain(secretPart);
  });

  it('authenticate as their tenant with their role, record the last-used time, and never cross tenants', async () => {
    const k = await createKey(A.tenantId, 'tenant-auditor');
    const read = await kit.call(k.secret, 'GET', `/v1/tenants/${A.tenantId}/roles`);
    expect(read.status).toBe(200);
    // The auditor role reads but does not write, and the key cannot reach another tenant.
    expect((await kit.call(k.secret, 'POST', `/v1/tenants/${A.tenantId}/roles`, { name: 'x', permissions: [] })).status).toBe(403);
    expect((await kit.call(k.secret, 'GET', `/v1/tenants/${B.tenantId}/roles`)).status).toBe(403);
    // Platform routes are never open to a tenant key.
    expect((await kit.call(k.secret, 'GET', '/v1/permissions')).status).toBe(403);
    await new Promise((r) => setTimeout(r, 50));
    const usage = await (await kit.call(ADMIN_KEY, 'GET', `/v1/tenants/${A.tenantId}/api-keys/${k.id}`)).json();
    expect(Date.parse(usage.lastUsedAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('a revoked key is refused on the next request on every instance (no cache)', async () => {
    const k = await createKey(A.tenantId, 'tenant-admin');
    // A second instance: its own auth layer and app over the same table.
    const kit2 = await createKit(t);
    for (const app of [kit, kit2]) expect((await app.call(k.secret, 'GET', `/v1/tenants/${A.tenantId}/roles`)).status).toBe(200);
    const del = await kit.call(A.token, 'DELETE', `/v1/tenants/${A.tenantId}/api-keys/${k.id}`);
    expect(del.status).toBe(200);
    expect((await del.json()).status).toBe('revoked');
    for (const app of [kit2, kit]) {
      const res = await app.call(k.secret, 'GET', `/v1/tenants/${A.tenantId}/roles`);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it('revoke honours If-Match (412 on a stale version) and is tenant-bound', async () => {
    const k = await createKey(A.tenantId, 'tenant-admin');
    expect((await kit.call(A.token, 'DELETE', `/v1/tenants/${A.tenantId}/api-keys/${k.id}`, undefined, { 'if-match': '"99"' })).status).toBe(412);
    // Tenant B's admin can neither see nor revoke it, even naming its own tenant in the path.
    expect((await kit.call(B.token, 'DELETE', `/v1/tenants/${B.tenantId}/api-keys/${k.id}`)).status).toBe(404);
    expect((await kit.call(B.token, 'DELETE', `/v1/tenants/${A.tenantId}/api-keys/${k.id}`)).status).toBe(403);
    expect((await kit.call(A.token, 'DELETE', `/v1/tenants/${A.tenantId}/api-keys/${k.id}`, undefined, { 'if-match': `"${k.version}"` })).status).toBe(200);
  });

  it('refuses malformed, unknown, wrong-secret and expired keys with 401', async () => {
    const k = await createKey(A.tenantId, 'tenant-admin', ADMIN_KEY, { expiresAt: new Date(Date.now() + 1500).toISOString() });
    const { id } = parseApiKey(k.secret)!;
    const wrongSecret = `gh_${id}_${'A'.repeat(43)}`;
    for (const cred of ['gh_nope', `gh_${'0'.repeat(26)}_${'A'.repeat(43)}`, wrongSecret]) {
      expect((await kit.call(cred, 'GET', `/v1/tenants/${A.tenantId}/roles`)).status).toBe(401);
    }
    expect((await kit.call(k.secret, 'GET', `/v1/tenants/${A.tenantId}/roles`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1600));
    expect((await kit.call(k.secret, 'GET', `/v1/tenants/${A.tenantId}/roles`)).status).toBe(401);
  });

  it('a key cannot hold platform-admin nor a role of another tenant; a body tenantId is ignored', async () => {
    expect((await kit.call(A.token, 'POST', `/v1/tenants/${A.tenantId}/api-keys`, { name: 'x', roleId: 'platform-admin' })).status).toBe(400);
    const roleB = await (await kit.call(B.token, 'POST', `/v1/tenants/${B.tenantId}/roles`, { name: 'b-role', permissions: [{ key: 'gatehouse:*', effect: 'ALLOW' }] })).json();
    expect((await kit.call(A.token, 'POST', `/v1/tenants/${A.tenantId}/api-keys`, { name: 'x', roleId: roleB.id })).status).toBe(404);
    expect((await kit.call(A.token, 'POST', `/v1/tenants/${A.tenantId}/api-keys`, { name: 'x', roleId: 'tenant-admin', tenantId: B.tenantId })).status).toBe(400);
  });

  it('secrets and tokens never reach the logs', async () => {
    const lines: string[] = [];
    const logger = createLogger('debug', new Writable({ write(c, _e, done) { lines.push(String(c)); done(); } }));
    const store = new Store({ doc: t.doc, tableName: t.tableName });
    const auth = await createAuth({ store, hierarchy: kit.hierarchy, engine: kit.access.engine, config: { adminApiKey: ADMIN_KEY, rateLimit: false } });
    const app = createApp({ version: 't', dynamoEndpoint: 'x', tableName: t.tableName, logger, routes: [auth.routes, accessRoutes(kit.access)], middleware: auth.middleware });
    const res = await app.request(`/v1/tenants/${A.tenantId}/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'logcheck', roleId: 'tenant-admin' }) });
    const { secret } = await res.json();
    await app.request(`/v1/tenants/${A.tenantId}/roles`, { headers: { authorization: `Bearer ${secret}` } });
    await app.request(`/v1/tenants/${A.tenantId}/roles`, { headers: { authorization: `Bearer ${A.token}` } });
    const all = lines.join('\n');
    expect(all).toContain('request');
    for (const s of [secret, parseApiKey(secret)!.secret, ADMIN_KEY, A.token]) expect(all).not.toContain(s);
  });
});
