import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import httpEvent from './fixtures/http-api-v2-event.json' with { type: 'json' };
import authEvent from './fixtures/authorizer-v2-event.json' with { type: 'json' };
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { ADMIN_KEY, createKit, type Kit } from '../../test/isolation-kit.ts';
import { GatehouseError } from '../errors.ts';
import { createApiHandler } from './api.ts';
import { AuthorizerUnavailableError, createLambdaAuthorizer, type AuthorizerEventV2, type IamPolicyResponse } from './authorizer.ts';
import { createRouteMatcher, routeMapOf, type RouteMap } from './routes.ts';
import { createAuth } from '../auth/index.ts';
import { createAccess } from '../access/index.ts';
import { Store } from '../store/store.ts';
import { createDynamoClients } from '../store/client.ts';

let t: TestTable;
let kit: Kit;
let A: { tenantId: string; userId: string; token: string };
let B: { tenantId: string; userId: string; token: string };
let routeMap: RouteMap;

beforeAll(async () => {
  t = await createTestTable();
  kit = await createKit(t);
  [A, B] = await Promise.all([kit.tenantWithAdmin('LambdaA'), kit.tenantWithAdmin('LambdaB')]);
  routeMap = routeMapOf(kit.app);
});
afterAll(() => t?.drop());

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

function apiEvent(method: string, path: string, o: { token?: string; body?: unknown; base64?: boolean; query?: string } = {}) {
  const e = clone(httpEvent) as typeof httpEvent & { body?: string; headers: Record<string, string>; rawQueryString: string };
  e.rawPath = path;
  e.rawQueryString = o.query ?? '';
  e.requestContext.http.method = method;
  e.requestContext.http.path = path;
  e.pathParameters = { proxy: path.replace(/^\/v1\//, '') };
  if (o.token) e.headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) {
    const text = JSON.stringify(o.body);
    e.headers['content-type'] = 'application/json';
    e.headers['content-length'] = String(Buffer.byteLength(text));
    e.body = o.base64 ? Buffer.from(text).toString('base64') : text;
    e.isBase64Encoded = !!o.base64;
  }
  return e;
}

describe('API handler (HTTP API v2 events)', () => {
  it('serves the same app: health, authenticated reads, creates with base64 bodies, problems', async () => {
    const h = createApiHandler(kit.app as never);
    type Result = { statusCode: number; body: string; headers?: Record<string, string> };
    const handler = (e: unknown) => h(e as never) as unknown as Promise<Result>;
    const health = await handler(apiEvent('GET', '/health'));
    expect(health.statusCode).toBe(200);
    expect(JSON.parse(health.body).status).toBe('ok');

    const roles = await handler(apiEvent('GET', `/v1/tenants/${A.tenantId}/roles`, { token: A.token, query: 'limit=5' }));
    expect(roles.statusCode).toBe(200);
    expect(JSON.parse(roles.body).items).toBeInstanceOf(Array);
    expect(roles.headers?.['x-request-id']).toBeTruthy();

    const created = await handler(apiEvent('POST', `/v1/tenants/${A.tenantId}/api-keys`, { token: A.token, body: { name: 'lambda', roleId: 'tenant-auditor' }, base64: true }));
    expect(created.statusCode).toBe(201);
    expect(JSON.parse(created.body).secret).toMatch(/^gh_/);

    const anon = await handler(apiEvent('GET', `/v1/tenants/${A.tenantId}/roles`));
    expect(anon.statusCode).toBe(401);
    expect(anon.headers?.['www-authenticate']).toBe('Bearer');
    expect(anon.headers?.['content-type']).toMatch(/problem\+json/);

    const cross = await handler(apiEvent('GET', `/v1/tenants/${B.tenantId}/roles`, { token: A.token }));
    expect(cross.statusCode).toBe(403);
  });
});

function authorizerEvent(method: string, path: string, token: string | undefined, o: { routeKey?: string } = {}): AuthorizerEventV2 {
  const e = clone(authEvent) as AuthorizerEventV2 & { headers: Record<string, string> };
  const match = createRouteMatcher(routeMap)(method, path);
  e.routeKey = o.routeKey ?? match?.routeKey ?? 'ANY /v1/{proxy+}';
  e.rawPath = path;
  e.routeArn = `arn:aws:execute-api:us-east-1:123456789012:abcdef123/$default/${method}${path}`;
  e.requestContext = { ...e.requestContext, http: { ...e.requestContext!.http, method, path } };
  e.pathParameters = o.routeKey?.includes('{proxy+}') ? { proxy: path.slice(4) } : (match?.params ?? {});
  e.identitySource = token ? [`Bearer ${token}`] : null;
  if (token) e.headers.authorization = `Bearer ${token}`;
  else delete e.headers.authorization;
  return e;
}

const effect = (r: IamPolicyResponse) => r.policyDocument.Statement[0].Effect;

describe('Lambda REQUEST authorizer', () => {
  const make = () => createLambdaAuthorizer({ authenticate: kit.auth.authenticateCredential, decide: kit.auth.decide, routeMap });

  it('the route map covers every /v1 route with its declared permission', () => {
    expect(routeMap['GET /v1/tenants/{tenantId}/roles']).toEqual({ permission: 'gatehouse:roles:read', tenantParam: 'tenantId' });
    expect(routeMap['POST /v1/tenants/{tenantId}/api-keys']).toEqual({ permission: 'gatehouse:apikeys:write', tenantParam: 'tenantId' });
    expect(routeMap['POST /v1/permissions']).toEqual({ permission: 'gatehouse:platform:admin' });
    const v1 = kit.app.routes.filter((r) => r.path.startsWith('/v1/') && r.method !== 'ALL');
    for (const r of v1) expect(routeMap[`${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`], `${r.method} ${r.path}`).toBeDefined();
  });

  it('allows with context (user id, tenant id) and denies another tenant, by route key or by proxy path', async () => {
    const authorize = make();
    const ok = await authorize(authorizerEvent('GET', `/v1/tenants/${A.tenantId}/roles`, A.token));
    expect(effect(ok)).toBe('Allow');
    expect(ok.principalId).toBe(A.userId);
    expect(ok.context).toMatchObject({ userId: A.userId, tenantId: A.tenantId, permission: 'gatehouse:roles:read', principalType: 'jwt' });
    expect(ok.policyDocument.Statement[0].Resource).toContain(`/GET/v1/tenants/${A.tenantId}/roles`);

    const other = await authorize(authorizerEvent('GET', `/v1/tenants/${B.tenantId}/roles`, A.token));
    expect(effect(other)).toBe('Deny');
    const viaProxy = await authorize(authorizerEvent('GET', `/v1/tenants/${B.tenantId}/roles`, A.token, { routeKey: 'ANY /v1/{proxy+}' }));
    expect(effect(viaProxy)).toBe('Deny');
    const okProxy = await authorize(authorizerEvent('POST', `/v1/tenants/${A.tenantId}/roles`, A.token, { routeKey: 'ANY /v1/{proxy+}' }));
    expect(effect(okProxy)).toBe('Allow');
    expect(effect(await authorize(authorizerEvent('GET', '/v1/permissions', A.token)))).toBe('Deny');
    expect(effect(await authorize(authorizerEvent('GET', '/v1/nope/nothing', A.token, { routeKey: 'ANY /v1/{proxy+}' })))).toBe('Deny');
    expect(effect(await authorize(authorizerEvent('POST', '/v1/permissions', ADMIN_KEY)))).toBe('Allow');
  });

  it('missing or invalid credentials are Unauthorized (401); a revoked API key too, at once', async () => {
    const authorize = make();
    await expect(authorize(authorizerEvent('GET', `/v1/tenants/${A.tenantId}/roles`, undefined))).rejects.toThrow('Unauthorized');
    await expect(authorize(authorizerEvent('GET', `/v1/tenants/${A.tenantId}/roles`, 'not-a-token'))).rejects.toThrow('Unauthorized');
    const { secret, id } = await (await kit.call(A.token, 'POST', `/v1/tenants/${A.tenantId}/api-keys`, { name: 'k', roleId: 'tenant-auditor' })).json();
    const r = await authorize(authorizerEvent('GET', `/v1/tenants/${A.tenantId}/roles`, secret));
    expect(effect(r)).toBe('Allow');
    expect(r.context).toMatchObject({ tenantId: A.tenantId, principalType: 'apiKey' });
    expect(effect(await authorize(authorizerEvent('POST', `/v1/tenants/${A.tenantId}/roles`, secret)))).toBe('Deny');
    expect((await kit.call(A.token, 'DELETE', `/v1/tenants/${A.tenantId}/api-keys/${id}`)).status).toBe(200);
    await expect(authorize(authorizerEvent('GET', `/v1/tenants/${A.tenantId}/roles`, secret))).rejects.toThrow('Unauthorized');
  });

  it('retryable failures are 503 (thrown), conflicts and other errors are a Deny', async () => {
    const ev = authorizerEvent('GET', `/v1/tenants/${A.tenantId}/roles`, A.token);
    const failing = (err: unknown) =>
      createLambdaAuthorizer({ authenticate: kit.auth.authenticateCredential, decide: async () => { throw err; }, routeMap });
    const e = await failing(new GatehouseError('RETRYABLE', 'busy'))(ev).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AuthorizerUnavailableError);
    expect((e as AuthorizerUnavailableError).statusCode).toBe(503);
    expect(effect(await failing(new GatehouseError('CONFLICT', 'lost'))(ev))).toBe('Deny');
    expect(effect(await failing(new Error('boom'))(ev))).toBe('Deny');

    // A real unreachable DynamoDB: the API key lookup fails transiently → 503, not a deny.
    const { doc, raw } = createDynamoClients({ endpoint: 'http://127.0.0.1:9', sdk: { maxAttempts: 1 } });
    try {
      const store = new Store({ doc, tableName: t.tableName });
      const down = await createAuth({ store, hierarchy: kit.hierarchy, engine: createAccess({ store, hierarchy: kit.hierarchy }).engine, config: { rateLimit: false } });
      const authorize = createLambdaAuthorizer({ authenticate: down.authenticateCredential, decide: down.decide, routeMap });
      const fake = `gh_${'0'.repeat(26)}_${'A'.repeat(43)}`;
      const err = await authorize(authorizerEvent('GET', `/v1/tenants/${A.tenantId}/roles`, fake)).catch((x: unknown) => x);
      expect(err).toBeInstanceOf(AuthorizerUnavailableError);
    } finally {
      raw.destroy();
    }
  });
});
