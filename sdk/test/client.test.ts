/**
 * The SDK against a running server (real HTTP over loopback, real DynamoDB Local): auth with API
 * keys and JWTs, typed calls, problems as GatehouseApiError, Idempotency-Key and If-Match helpers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { ADMIN_KEY, createKit, type Kit } from '../../test/isolation-kit.ts';
import { serveNode, type RunningServer } from '../../src/http/node.ts';
import { createGatehouseClient, GatehouseApiError, idempotent, ifMatch, unwrap, versionOf, type GatehouseClient } from '../src/index.ts';

let t: TestTable;
let kit: Kit;
let server: RunningServer;
let baseUrl: string;

beforeAll(async () => {
  t = await createTestTable();
  kit = await createKit(t, { full: true });
  server = await serveNode(kit.app, 0, '127.0.0.1');
  baseUrl = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server?.close();
  await t?.drop();
});

// The generated `paths` hold the routes the composition root wires; until then the test uses the
// same client untyped on /v1 so it runs against the whole API either way.
const loose = (c: GatehouseClient) => c as unknown as { [m in 'GET' | 'POST' | 'DELETE' | 'PATCH' | 'PUT']: (path: string, init?: unknown) => Promise<{ data?: any; error?: unknown; response: Response }> };

describe('@gatehouse/sdk', () => {
  it('calls the API with an API key, a JWT, and surfaces problems as GatehouseApiError', async () => {
    const admin = createGatehouseClient({ baseUrl, apiKey: ADMIN_KEY });
    const health = await unwrap(admin.GET('/health'));
    expect(health.status).toBe('ok');

    const A = await kit.tenantWithAdmin('SdkCo');
    const user = createGatehouseClient({ baseUrl, token: async () => A.token });
    const roles = await unwrap(loose(user).GET('/v1/tenants/{tenantId}/roles', { params: { path: { tenantId: A.tenantId } } }));
    expect(Array.isArray(roles.items)).toBe(true);

    const key = await unwrap(loose(user).POST('/v1/tenants/{tenantId}/api-keys', { params: { path: { tenantId: A.tenantId } }, body: { name: 'sdk', roleId: 'tenant-auditor' }, headers: idempotent('sdk-1') }));
    const again = await unwrap(loose(user).POST('/v1/tenants/{tenantId}/api-keys', { params: { path: { tenantId: A.tenantId } }, body: { name: 'sdk', roleId: 'tenant-auditor' }, headers: idempotent('sdk-1') }));
    expect(again.id).toBe(key.id);

    const machine = createGatehouseClient({ baseUrl, apiKey: key.secret });
    const err = await unwrap(loose(machine).POST('/v1/tenants/{tenantId}/roles', { params: { path: { tenantId: A.tenantId } }, body: { name: 'nope', permissions: [] } })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatehouseApiError);
    expect((err as GatehouseApiError).status).toBe(403);
    expect((err as GatehouseApiError).code).toBe('FORBIDDEN');
    expect((err as GatehouseApiError).problem.requestId).toBeTruthy();

    const read = await loose(user).GET('/v1/tenants/{tenantId}/api-keys/{keyId}', { params: { path: { tenantId: A.tenantId, keyId: key.id } } });
    const version = versionOf(read.response)!;
    const stale = await unwrap(loose(user).DELETE('/v1/tenants/{tenantId}/api-keys/{keyId}', { params: { path: { tenantId: A.tenantId, keyId: key.id } }, headers: ifMatch(version + 5) })).catch((e: GatehouseApiError) => e);
    expect((stale as GatehouseApiError).status).toBe(412);
    const revoked = await unwrap(loose(user).DELETE('/v1/tenants/{tenantId}/api-keys/{keyId}', { params: { path: { tenantId: A.tenantId, keyId: key.id } }, headers: ifMatch(version) }));
    expect(revoked.status).toBe('revoked');
    const gone = await unwrap(loose(machine).GET('/v1/tenants/{tenantId}/roles', { params: { path: { tenantId: A.tenantId } } })).catch((e: GatehouseApiError) => e);
    expect((gone as GatehouseApiError).status).toBe(401);
  });
});
