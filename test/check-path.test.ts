/**
 * The check request path end to end — the composition root's app (createGatehouse), served on a
 * real socket, a JWT caller — counted with the request accounting's totals: what DynamoDB sees
 * per HTTP request of POST /v1/tenants/{t}/check.
 *  - bounded staleness (body maxStalenessMs, and GATEHOUSE_AUTHZ_MAX_STALENESS_MS for the caller's
 *    authorization): 0 requests — authentication is CPU only, no idempotency record without an
 *    Idempotency-Key header, no per-request read anywhere in the middleware;
 *  - strongly consistent: one stamp BatchGetItem for the caller's authorization, one for the check;
 *  - an API key is read on every request (never cached): revoked, refused by the next request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatehouse, type Gatehouse } from '../src/gatehouse.ts';
import { systemContext } from '../src/context.ts';
import { createLogger } from '../src/http/logger.ts';
import { serveNode, type RunningServer } from '../src/http/node.ts';
import { totals } from '../src/store/accounting.ts';
import { createTestTable, type TestTable } from './harness.ts';

let t: TestTable;
let servers: RunningServer[] = [];
const gatehouses: Gatehouse[] = [];
const sys = systemContext('test');

async function serve(authorizationMaxStalenessMs: number) {
  const g = await createGatehouse({
    clients: { raw: t.raw, doc: t.doc },
    tableName: t.tableName,
    hierarchy: 'facilities',
    logger: createLogger('silent'),
    identity: { scrypt: { N: 1024, r: 8, p: 1 } },
    auth: { devIssuer: true, rateLimit: false, authorizationMaxStalenessMs },
  });
  gatehouses.push(g);
  const server = await serveNode(g.app(), 0, '127.0.0.1');
  servers.push(server);
  return { g, base: `http://127.0.0.1:${server.port}` };
}

let strong: Awaited<ReturnType<typeof serve>>;
let bounded: Awaited<ReturnType<typeof serve>>;
let tenantId: string;
let scope: { kind: string; id: string };
let callerToken: string;
let strongToken: string;
let subjectId: string;
let callerId: string;

beforeAll(async () => {
  t = await createTestTable();
  strong = await serve(0);
  bounded = await serve(60_000);
  const { g } = strong;
  tenantId = (await g.tenancy.tenants.create(sys, { name: `check-path-${Date.now()}` })).id;
  scope = { kind: g.hierarchy.tenantKind, id: tenantId };
  const caller = await g.identity.users.create(sys, tenantId, { email: `caller-${tenantId.toLowerCase()}@example.com` } as never);
  const subject = await g.identity.users.create(sys, tenantId, { email: `subject-${tenantId.toLowerCase()}@example.com` } as never);
  subjectId = subject.id;
  callerId = caller.id;
  await g.access.assignments.create(sys, tenantId, { userId: caller.id, roleId: 'tenant-admin', scope });
  await g.access.assignments.create(sys, tenantId, { userId: subject.id, roleId: 'tenant-auditor', scope });
  // Each instance has its own development issuer (key pair).
  callerToken = (await bounded.g.auth.devIssuer!.issue({ sub: caller.id })).token;
  strongToken = (await strong.g.auth.devIssuer!.issue({ sub: caller.id })).token;
  await new Promise((r) => setTimeout(r, 1100)); // past the engine's settle window of these writes
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
  for (const g of gatehouses) g.close();
  await t?.drop();
});

async function check(base: string, credential: string, extra: object = {}) {
  const res = await fetch(`${base}/v1/tenants/${tenantId}/check`, {
    method: 'POST',
    headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json' },
    body: JSON.stringify({ userId: subjectId, permission: 'gatehouse:roles:read', scope, ...extra }),
  });
  return { status: res.status, body: (await res.json()) as { allowed?: boolean; source?: string } };
}

/** DynamoDB requests (by command) sent while `fn` runs. */
async function counted(fn: () => Promise<unknown>) {
  const before = { ...totals.byCommand };
  const n = totals.requests;
  await fn();
  const by: Record<string, number> = {};
  for (const [k, v] of Object.entries(totals.byCommand)) if (v - (before[k] ?? 0) > 0) by[k] = v - (before[k] ?? 0);
  return { requests: totals.requests - n, byCommand: by };
}

describe('POST /v1/tenants/{t}/check: DynamoDB requests per HTTP request', () => {
  it('bounded staleness: 0 requests end to end (JWT caller, authorization and check both bounded)', async () => {
    // Warm: the caller's authorization entry and the subject's entry.
    for (let i = 0; i < 3; i++) expect((await check(bounded.base, callerToken, { maxStalenessMs: 60_000 })).status).toBe(200);
    const { requests } = await counted(async () => {
      for (let i = 0; i < 20; i++) {
        const r = await check(bounded.base, callerToken, { maxStalenessMs: 60_000 });
        expect(r).toMatchObject({ status: 200, body: { allowed: true, source: 'bounded' } });
      }
      // Concurrent ones too.
      const all = await Promise.all(Array.from({ length: 20 }, () => check(bounded.base, callerToken, { maxStalenessMs: 60_000 })));
      expect(all.every((r) => r.status === 200 && r.body.source === 'bounded')).toBe(true);
    });
    expect(requests).toBe(0);
  });

  it("the caller's authorization: a grant the bounded cache confirms is answered without a promise; anything else goes through decide", async () => {
    await check(bounded.base, callerToken, { maxStalenessMs: 60_000 }); // caches the caller's entry at the tenant
    const caller = { actor: { type: 'user' as const, id: callerId }, platformAdmin: false, kind: 'jwt' as const };
    expect(bounded.g.auth.authorizer(caller, 'gatehouse:check', tenantId)).toBe(true);
    // Not held (tenant-admin lacks platform administration): a promise, and it says no.
    const denied = bounded.g.auth.authorizer(caller, 'gatehouse:platform:admin', tenantId);
    expect(denied).toBeInstanceOf(Promise);
    expect(await denied).toBe(false);
    // Strongly consistent instance: always a read, so always a promise.
    const strongly = strong.g.auth.authorizer(caller, 'gatehouse:check', tenantId);
    expect(strongly).toBeInstanceOf(Promise);
    expect(await strongly).toBe(true);
    // Another tenant's id: no cache entry, a promise, no.
    expect(await bounded.g.auth.authorizer(caller, 'gatehouse:check', '01ARZ3NDEKTSV4RRFFQ69G5FAV')).toBe(false);
    expect(bounded.g.auth.authorizer({ ...caller, platformAdmin: true }, 'gatehouse:check', tenantId)).toBe(true);
  });

  it('strongly consistent, warm: one stamp BatchGetItem for the authorization, one for the check, nothing else', async () => {
    for (let i = 0; i < 3; i++) expect((await check(strong.base, strongToken)).status).toBe(200);
    const { byCommand } = await counted(async () => {
      for (let i = 0; i < 10; i++) expect(await check(strong.base, strongToken)).toMatchObject({ status: 200, body: { allowed: true, source: 'validated' } });
    });
    expect(byCommand).toEqual({ BatchGetItem: 20 });
  });

  it('an API key is verified by a strongly consistent read on every request: revoked, the next request is refused', async () => {
    const { apiKey, secret } = await strong.g.auth.apiKeys.create(sys, tenantId, { name: 'check-path', roleId: 'tenant-admin' });
    await check(bounded.base, secret, { maxStalenessMs: 60_000 }); // first use writes the usage item
    const { byCommand } = await counted(async () => {
      for (let i = 0; i < 5; i++) expect(await check(bounded.base, secret, { maxStalenessMs: 60_000 })).toMatchObject({ status: 200, body: { allowed: true } });
    });
    // Per request: the key, then its role and the tenant (authorization); the check itself: 0.
    expect(byCommand).toEqual({ GetItem: 15 });
    await strong.g.auth.apiKeys.revoke(sys, tenantId, apiKey.id);
    expect((await check(bounded.base, secret, { maxStalenessMs: 60_000 })).status).toBe(401);
  });
});
