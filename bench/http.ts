/**
 * HTTP throughput of the check endpoint, measured with a load generator (autocannon, in a child
 * process of its own) over loopback, beside a trivial route served by the same process in the same run:
 *
 *   http.hello.req_per_s          GET /v1/bench/hello → "hello": a trivial route INSIDE the Gatehouse
 *                                 app, like with like: the same middleware as the check (request id,
 *                                 access log, body limit, authentication with the same JWT,
 *                                 idempotency, preconditions), the same credential, the same server;
 *                                 no authorization, body or engine (those are the check's own cost)
 *   http.hello.bare.req_per_s     GET /hello → "hello" on a bare Hono app (no middleware at all):
 *                                 the ceiling of Node + Hono on this machine
 *   http.check.warm.req_per_s     POST /v1/tenants/{t}/check, strongly consistent, warm caches:
 *                                 the caller's authorization and the check each validate their
 *                                 cached decision against the version stamps (1 wave each; stamp
 *                                 reads of concurrent requests share BatchGetItems)
 *   http.check.bounded.req_per_s  the same with maxStalenessMs in the body, on a server whose
 *                                 admin-API authorization also allows bounded staleness
 *                                 (GATEHOUSE_AUTHZ_MAX_STALENESS_MS): no DynamoDB request at all
 *   http.check.bounded_vs_hello   bounded / hello (goal ≥ 0.5)
 *   http.check.bounded_vs_bare_hello  bounded / bare hello
 *   http.check.{warm,bounded}.ddb_per_req  DynamoDB requests the server sent per HTTP request
 *                                 during the measured run (request accounting); bounded: 0 but for
 *                                 the revalidation when the 5 s staleness bound runs out
 *   http.{hello.bare,hello,check.bounded,check.warm}.cpu_us_per_req  this process's CPU (user +
 *                                 system) per request during the measured runs: the server alone,
 *                                 since the load generator runs in a process of its own
 *   authorizer.p50_ms / .p99_ms   the Lambda REQUEST authorizer invoked in-process with an API
 *                                 Gateway event (JWT caller, warm), latency per invocation
 *   authorizer.apikey.p50_ms      the same with an API key (one strongly consistent GetItem + role/tenant read)
 * The caller is a JWT user holding tenant-admin; logs are silent, rate limiting off. Every target
 * gets a warm-up run (JIT, connection pools, caches), then BENCH_HTTP_ROUNDS (7) measured runs of 2 s,
 * interleaved across targets so that drift in the machine's load (a shared 2-core box) hits all
 * alike; a req/s figure is the median of its rounds, a ratio the median of per-round ratios. Every
 * run uses the same autocannon settings (32 connections, its own process; threads: see WORKERS).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Hono } from 'hono';
import { createAccess, accessRoutes } from '../src/access/index.ts';
import { createAuth, createDevIssuer } from '../src/auth/index.ts';
import { systemContext } from '../src/context.ts';
import { createApp } from '../src/http/app.ts';
import type { AppHono } from '../src/http/deps.ts';
import { createLogger } from '../src/http/logger.ts';
import { serveNode } from '../src/http/node.ts';
import { createLambdaAuthorizer } from '../src/lambda/authorizer.ts';
import { routeMapOf } from '../src/lambda/routes.ts';
import { totals } from '../src/store/accounting.ts';
import type { Store } from '../src/store/store.ts';
import { loadHierarchy } from '../src/tenancy/hierarchy.ts';
import { createTenancy } from '../src/tenancy/index.ts';
import { UserService } from '../src/identity/service.ts';
import { IdentityRepository } from '../src/identity/repository.ts';
import { withKid } from '../src/identity/secrets.ts';
import { randomBytes } from 'node:crypto';
import { percentile, round, timeSeq } from './stats.ts';

/** Measured seconds per target, split into ROUNDS runs. */
const DURATION_S = Number(process.env.BENCH_HTTP_SECONDS ?? 14);
const WARMUP_S = Number(process.env.BENCH_HTTP_WARMUP_SECONDS ?? 2);
/** Measured runs per target, interleaved (hello, check, hello, check…): drift in the machine's load hits all alike. */
const ROUNDS = Math.max(1, Number(process.env.BENCH_HTTP_ROUNDS ?? 7));
const CONNECTIONS = 32;
/**
 * Load-generator worker threads inside the autocannon process; 0 = its main thread generates the
 * load. On a 2-core machine one generator thread and the server's event loop fill the CPU; more
 * threads would measure the scheduler.
 */
const WORKERS = Number(process.env.BENCH_HTTP_WORKERS ?? 0);

type LoadInit = { method?: string; headers?: Record<string, string>; body?: string };
type LoadResult = { requests: { average: number; total: number }; non2xx: number; errors: number };
const AUTOCANNON = fileURLToPath(import.meta.resolve('autocannon/autocannon.js'));
const execFileAsync = promisify(execFile);

/**
 * One load run, by autocannon in a child process of its own: a load generator inside the server's
 * process would share its event loop, heap and garbage collector with the server it measures.
 */
async function run(url: string, init: LoadInit, duration: number): Promise<LoadResult> {
  const args = [AUTOCANNON, '--json', '--no-progress', '-c', String(CONNECTIONS), '-d', String(duration), '-m', init.method ?? 'GET'];
  if (WORKERS > 0) args.push('-w', String(WORKERS));
  for (const [k, v] of Object.entries(init.headers ?? {})) args.push('-H', `${k}=${v}`);
  if (init.body !== undefined) args.push('-b', init.body);
  args.push(url);
  const { stdout } = await execFileAsync(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 });
  const result = JSON.parse(stdout) as LoadResult;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`load on ${url}: ${result.non2xx} non-2xx responses, ${result.errors} errors`);
  return result;
}

const median = (xs: number[]) => percentile(xs, 50);

/**
 * Each target: a warm-up run, then ROUNDS measured runs of DURATION_S / ROUNDS seconds each,
 * interleaved across targets. Per target: the median requests/s, every round's requests/s, and
 * the DynamoDB requests sent per HTTP request over all its measured runs.
 */
async function loadInterleaved(targets: Record<string, { url: string; init?: LoadInit }>, log: (s: string) => void) {
  const names = Object.keys(targets);
  for (const n of names) if (WARMUP_S > 0) await run(targets[n].url, targets[n].init ?? {}, WARMUP_S);
  const rps: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const ddb: Record<string, { sent: number; http: number; cpuUs: number }> = Object.fromEntries(names.map((n) => [n, { sent: 0, http: 0, cpuUs: 0 }]));
  const seconds = Math.max(1, Math.round(DURATION_S / ROUNDS));
  for (let r = 0; r < ROUNDS; r++) {
    for (const n of names) {
      const before = totals.requests;
      const cpuBefore = process.cpuUsage();
      const result = await run(targets[n].url, targets[n].init ?? {}, seconds);
      const cpu = process.cpuUsage(cpuBefore);
      ddb[n].sent += totals.requests - before;
      ddb[n].http += result.requests.total;
      ddb[n].cpuUs += cpu.user + cpu.system;
      rps[n].push(Math.round(result.requests.average));
    }
    log(`round ${r + 1}: ${names.map((n) => `${n} ${rps[n][r]}/s`).join(', ')}`);
  }
  return Object.fromEntries(names.map((n) => [n, { rps: median(rps[n]), rounds: rps[n], ddbPerReq: ddb[n].http ? round(ddb[n].sent / ddb[n].http, 4) : 0, cpuUsPerReq: ddb[n].http ? round(ddb[n].cpuUs / ddb[n].http, 1) : 0 }]));
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
    // /v1/bench/hello: a trivial route behind the same middleware as the check (no authorization).
    const helloRoute = (app: AppHono) => void app.get('/v1/bench/hello', (c) => c.text('hello'));
    const app = createApp({ version: 'bench', dynamoEndpoint: ctx.endpoint, tableName: store.tableName, logger, routes: [auth.routes, accessRoutes(access), helloRoute], middleware: auth.middleware, authorizer: auth.authorizer });
    return { auth, app };
  };

  // One process serves all three (each app with its own authorizer); each load runs alone.
  const hello = new Hono();
  hello.get('/hello', (c) => c.text('hello'));
  const strong = await build(0);
  const bounded = await build(5_000);
  const servers = await Promise.all([serveNode(hello, 0, '127.0.0.1'), serveNode(strong.app, 0, '127.0.0.1'), serveNode(bounded.app, 0, '127.0.0.1')]);
  const [helloUrl, strongUrl, boundedUrl] = servers.map((s) => `http://127.0.0.1:${s.port}`);
  const out: Record<string, number> = {};
  try {
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

    ctx.log(`hello (bare), hello (app), check bounded, check warm: warm-up, then ${ROUNDS} interleaved rounds…`);
    const auth = { headers: { authorization: headers.authorization } };
    const m = await loadInterleaved(
      {
        bare: { url: `${helloUrl}/hello`, init: auth },
        hello: { url: `${boundedUrl}/v1/bench/hello`, init: auth },
        // Right after hello: the warm check keeps DynamoDB Local busy for a moment after its run.
        bounded: { url: `${boundedUrl}${checkPath}`, init: { method: 'POST', headers, body: body({ maxStalenessMs: 5_000 }) } },
        warm: { url: `${strongUrl}${checkPath}`, init: { method: 'POST', headers, body: body() } },
      },
      ctx.log,
    );
    out['http.hello.req_per_s'] = m.hello.rps;
    out['http.hello.bare.req_per_s'] = m.bare.rps;
    out['http.check.warm.req_per_s'] = m.warm.rps;
    out['http.check.warm.ddb_per_req'] = m.warm.ddbPerReq;
    out['http.check.bounded.req_per_s'] = m.bounded.rps;
    out['http.check.bounded.ddb_per_req'] = m.bounded.ddbPerReq;
    // The server's CPU per request (this process serves; the load generator runs in its own): the
    // throughput a saturated core would give, less sensitive to the machine's drift than req/s.
    out['http.hello.bare.cpu_us_per_req'] = m.bare.cpuUsPerReq;
    out['http.hello.cpu_us_per_req'] = m.hello.cpuUsPerReq;
    out['http.check.bounded.cpu_us_per_req'] = m.bounded.cpuUsPerReq;
    out['http.check.warm.cpu_us_per_req'] = m.warm.cpuUsPerReq;
    // Ratios: the median of the per-round ratios (each round's runs are back to back).
    const ratio = (a: number[], b: number[]) => round(median(a.map((x, i) => x / b[i])));
    out['http.check.bounded_vs_hello'] = ratio(m.bounded.rounds, m.hello.rounds);
    out['http.check.bounded_vs_bare_hello'] = ratio(m.bounded.rounds, m.bare.rounds);
    out['http.check.warm_vs_hello'] = ratio(m.warm.rounds, m.hello.rounds);

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
