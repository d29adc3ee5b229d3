/**
 * HTTP throughput of the check endpoint, measured with a load generator (autocannon, in worker
 * threads) over loopback, beside a trivial Hono route served by the same process in the same run:
 *
 *   http.hello.req_per_s          GET /hello → "hello" (a bare Hono app: the ceiling of this stack)
 *   http.check.warm.req_per_s     POST /v1/tenants/{t}/check, strongly consistent, warm caches:
 *                                 the caller's authorization and the check each validate their
 *                                 cached decision with one stamp read (1 wave each)
 *   http.check.bounded.req_per_s  the same with maxStalenessMs in the body, on a server whose
 *                                 admin-API authorization also allows bounded staleness
 *                                 (GATEHOUSE_AUTHZ_MAX_STALENESS_MS): no DynamoDB request at all
 *   http.check.bounded_vs_hello   ratio (goal ≥ 0.5)
 *   authorizer.p50_ms / .p99_ms   the Lambda REQUEST authorizer invoked in-process with an API
 *                                 Gateway event (JWT caller, warm), latency per invocation
 *   authorizer.apikey.p50_ms      the same with an API key (one strongly consistent GetItem + role/tenant read)
 * The caller is a JWT user holding tenant-admin; logs are silent, rate limiting off.
 */
import autocannon from 'autocannon';
import { Hono } from 'hono';
import { createAccess, accessRoutes } from '../src/access/index.ts';
import { createAuth, createDevIssuer } from '../src/auth/index.ts';
import { systemContext } from '../src/context.ts';
import { createApp } from '../src/http/app.ts';
import { setAuthorizer } from '../src/http/caller.ts';
import { createLogger } from '../src/http/logger.ts';
import { serveNode } from '../src/http/node.ts';
import { createLambdaAuthorizer } from '../src/lambda/authorizer.ts';
import { routeMapOf } from '../src/lambda/routes.ts';
import type { Store } from '../src/store/store.ts';
import { loadHierarchy } from '../src/tenancy/hierarchy.ts';
import { createTenancy } from '../src/tenancy/index.ts';
import { UserService } from '../src/identity/service.ts';
import { IdentityRepository } from '../src/identity/repository.ts';
import { withKid } from '../src/identity/secrets.ts';
import { randomBytes } from 'node:crypto';
import { percentile, round, timeSeq } from './stats.ts';

const DURATION_S = Number(process.env.BENCH_HTTP_SECONDS ?? 5);
const CONNECTIONS = 32;

async function load(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<number> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_S, workers: 2, method: (init.method ?? 'GET') as 'GET', headers: init.headers, body: init.body });
  const non2xx = (result as { non2xx?: number }).non2xx ?? 0;
  if (non2xx > 0 || result.errors > 0) throw new Error(`load on ${url}: ${non2xx} non-2xx responses, ${result.errors} errors`);
  return Math.round(result.requests.average);
}

export async function benchHttp(ctx: { store: Store; endpoint: string; log: (s: string) => void }): Promise<Record<string, number>> {
  const { store } = ctx;
  const hierarchy = loadHierarchy('facilities');
  const access = createAccess({ store, hierarchy });
  await access.bootstrap(systemContext());
  const tenancy = createTenancy({ store, hierarchy });
  const users = new UserService(new IdentityRepository(store, hierarchy), hierarchy, { dataKey: withKid(randomBytes(32)), scrypt: { N: 1024, r: 8, p: 1 } });
  const sys = systemContext();
  const tenant = await tenancy.tenants.create(sys, { name: `bench-http-${Date.now()}` });
  const scope = { kind: hierarchy.tenantKind, id: tenant.id };
  const caller = await users.create(sys, tenant.id, { email: `caller-${tenant.id.toLowerCase()}@example.com` } as never);
  const subject = await users.create(sys, tenant.id, { email: `subject-${tenant.id.toLowerCase()}@example.com` } as never);
  await access.assignments.create(sys, tenant.id, { userId: caller.id, roleId: 'tenant-admin', scope });
  await access.assignments.create(sys, tenant.id, { userId: subject.id, roleId: 'tenant-auditor', scope });

  const logger = createLogger('silent');
  const devIssuer = await createDevIssuer();
  const build = async (maxStalenessMs: number) => {
    const auth = await createAuth({ store, hierarchy, engine: access.engine, devIssuer, config: { devIssuer: true, rateLimit: false, authorizationMaxStalenessMs: maxStalenessMs } });
    const app = createApp({ version: 'bench', dynamoEndpoint: ctx.endpoint, tableName: store.tableName, logger, routes: [auth.routes, accessRoutes(access)], middleware: auth.middleware });
    return { auth, app };
  };

  // One process serves all three; each measured alone.
  const hello = new Hono();
  hello.get('/hello', (c) => c.text('hello'));
  const strong = await build(0);
  const bounded = await build(5_000);
  const servers = await Promise.all([serveNode(hello, 0, '127.0.0.1'), serveNode(strong.app, 0, '127.0.0.1'), serveNode(bounded.app, 0, '127.0.0.1')]);
  const [helloUrl, strongUrl, boundedUrl] = servers.map((s) => `http://127.0.0.1:${s.port}`);
  const out: Record<string, number> = {};
  try {
    setAuthorizer(strong.auth.authorizer);
    const token = (await strong.auth.devIssuer!.issue({ sub: caller.id, ttlSeconds: 3600 })).token;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const checkPath = `/v1/tenants/${tenant.id}/check`;
    const body = (extra: object = {}) => JSON.stringify({ userId: subject.id, permission: 'gatehouse:roles:read', scope, ...extra });

    // Warm and sanity-check both paths once.
    for (const [base, b] of [[strongUrl, body()], [boundedUrl, body({ maxStalenessMs: 5_000 })]] as const) {
      const res = await fetch(`${base}${checkPath}`, { method: 'POST', headers, body: b });
      const d = (await res.json()) as { allowed?: boolean };
      if (res.status !== 200 || d.allowed !== true) throw new Error(`check warm-up: ${res.status} ${JSON.stringify(d)}`);
    }

    ctx.log('hello…');
    out['http.hello.req_per_s'] = await load(`${helloUrl}/hello`);
    ctx.log('check (strongly consistent, warm)…');
    out['http.check.warm.req_per_s'] = await load(`${strongUrl}${checkPath}`, { method: 'POST', headers, body: body() });
    ctx.log('check (bounded staleness)…');
    // The app's authorizer is process-wide (setAuthorizer): switch to the bounded server's.
    setAuthorizer(bounded.auth.authorizer);
    out['http.check.bounded.req_per_s'] = await load(`${boundedUrl}${checkPath}`, { method: 'POST', headers, body: body({ maxStalenessMs: 5_000 }) });
    setAuthorizer(strong.auth.authorizer);
    out['http.check.bounded_vs_hello'] = round(out['http.check.bounded.req_per_s'] / out['http.hello.req_per_s']);
    out['http.check.warm_vs_hello'] = round(out['http.check.warm.req_per_s'] / out['http.hello.req_per_s']);

    // The Lambda authorizer, in-process, with an API Gateway payload 2.0 event.
    ctx.log('Lambda authorizer…');
    const routeMap = routeMapOf(strong.app);
    const authorize = createLambdaAuthorizer({ authenticate: strong.auth.authenticateCredential, decide: strong.auth.decide, routeMap });
    const event = (credential: string) => ({
      version: '2.0',
      type: 'REQUEST',
      routeArn: `arn:aws:execute-api:eu-west-1:123456789012:api/$default/POST${checkPath}`,
      identitySource: [`Bearer ${credential}`],
      routeKey: 'POST /v1/tenants/{tenantId}/check',
      rawPath: checkPath,
      headers: { authorization: `Bearer ${credential}` },
      pathParameters: { tenantId: tenant.id },
      requestContext: { http: { method: 'POST', path: checkPath }, requestId: 'bench' },
    });
    const jwtEvent = event(token);
    const lat = await timeSeq(500, async () => {
      const r = await authorize(jwtEvent);
      if (r.policyDocument.Statement[0].Effect !== 'Allow') throw new Error('authorizer denied the bench caller');
    });
    out['authorizer.p50_ms'] = round(percentile(lat, 50));
    out['authorizer.p99_ms'] = round(percentile(lat, 99));
    const { secret } = await strong.auth.apiKeys.create(sys, tenant.id, { name: 'bench', roleId: 'tenant-admin' });
    const keyEvent = event(secret);
    const latKey = await timeSeq(300, () => authorize(keyEvent));
    out['authorizer.apikey.p50_ms'] = round(percentile(latKey, 50));
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
  return out;
}
