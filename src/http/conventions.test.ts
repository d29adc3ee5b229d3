import { createRoute, z } from '@hono/zod-openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { ADMIN_KEY, createKit, type Kit } from '../../test/isolation-kit.ts';
import { authorize, ctxOf } from './caller.ts';
import { bearer, errorResponses, json201, jsonBody, jsonResponse } from './common.ts';
import { IfMatchHeader, requireIfMatch, withEtag } from './conventions.ts';
import type { RouteModule } from './deps.ts';
import { TokenBuckets } from './ratelimit.ts';
import { keys } from '../store/keys.ts';
import { ulid } from 'ulid';

let t: TestTable;
let kit: Kit;
let created = 0;

const Thing = z.object({ id: z.string(), name: z.string(), version: z.number() });
/** A versioned resource over the real store, as domain routes do it. */
const things: RouteModule = (app) => {
  app.openapi(
    createRoute({ method: 'post', path: '/v1/things', security: bearer, middleware: [authorize('gatehouse:platform:admin')] as const, request: { body: jsonBody(z.object({ name: z.string() })) }, responses: { 201: jsonResponse(Thing, 'created'), ...errorResponses(400, 422) } }),
    async (c) => {
      created++;
      const id = ulid();
      const it = await kit.store.put({ PK: `THING#${id}`, SK: 'METADATA', Type: 'Thing', id, name: c.req.valid('json').name }, { ifNotExists: true });
      void ctxOf(c);
      return json201(c, withEtag(c, { id, name: it.name as string, version: it.version }), `/v1/things/${id}`);
    },
  );
  app.openapi(
    createRoute({ method: 'get', path: '/v1/things/{id}', security: bearer, middleware: [authorize('gatehouse:platform:admin')] as const, request: { params: z.object({ id: z.string() }) }, responses: { 200: jsonResponse(Thing, 'thing') } }),
    async (c) => {
      const it = await kit.store.get<{ id: string; name: string; version: number }>({ PK: `THING#${c.req.valid('param').id}`, SK: 'METADATA' });
      return c.json(withEtag(c, { id: it!.id, name: it!.name, version: it!.version }), 200);
    },
  );
  app.openapi(
    createRoute({ method: 'patch', path: '/v1/things/{id}', security: bearer, middleware: [authorize('gatehouse:platform:admin')] as const, request: { params: z.object({ id: z.string() }), headers: IfMatchHeader, body: jsonBody(z.object({ name: z.string() })) }, responses: { 200: jsonResponse(Thing, 'thing'), ...errorResponses(412, 428) } }),
    async (c) => {
      const expectedVersion = requireIfMatch(c);
      const it = await kit.store.update<{ id: string; name: string }>({ PK: `THING#${c.req.valid('param').id}`, SK: 'METADATA' }, { set: { name: c.req.valid('json').name }, expectedVersion });
      return c.json(withEtag(c, { id: it.id, name: it.name, version: it.version }), 200);
    },
  );
};

beforeAll(async () => {
  t = await createTestTable();
  kit = await createKit(t, { routes: [things] });
});
afterAll(() => t?.drop());

describe('ETag / If-Match', () => {
  it('reads carry ETag; a matching If-Match updates, a stale one is 412, a missing one 428', async () => {
    const res = await kit.call(ADMIN_KEY, 'POST', '/v1/things', { name: 'a' });
    expect(res.status).toBe(201);
    const { id } = await res.json();
    const read = await kit.call(ADMIN_KEY, 'GET', `/v1/things/${id}`);
    expect(read.headers.get('etag')).toBe('"1"');
    const ok = await kit.call(ADMIN_KEY, 'PATCH', `/v1/things/${id}`, { name: 'b' }, { 'if-match': '"1"' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('etag')).toBe('"2"');
    const stale = await kit.call(ADMIN_KEY, 'PATCH', `/v1/things/${id}`, { name: 'c' }, { 'if-match': '"1"' });
    expect(stale.status).toBe(412);
    expect((await stale.json()).code).toBe('PRECONDITION_FAILED');
    expect(stale.headers.get('x-request-id')).toBeTruthy();
    const missing = await kit.call(ADMIN_KEY, 'PATCH', `/v1/things/${id}`, { name: 'c' });
    expect(missing.status).toBe(428);
    expect((await missing.json()).code).toBe('PRECONDITION_REQUIRED');
    expect((await kit.call(ADMIN_KEY, 'PATCH', `/v1/things/${id}`, { name: 'c' }, { 'if-match': '*' })).status).toBe(428);
    expect((await kit.call(ADMIN_KEY, 'PATCH', `/v1/things/${id}`, { name: 'c' }, { 'if-match': 'garbage' })).status).toBe(412);
    expect((await kit.call(ADMIN_KEY, 'PATCH', `/v1/things/${id}`, { name: 'c' }, { 'if-match': 'W/"2"' })).status).toBe(200);
  });
});

describe('Idempotency-Key', () => {
  it('same key and body replays the first response; nothing is created twice', async () => {
    const before = created;
    const h = { 'idempotency-key': 'k-1' };
    const r1 = await kit.call(ADMIN_KEY, 'POST', '/v1/things', { name: 'x' }, h);
    const r2 = await kit.call(ADMIN_KEY, 'POST', '/v1/things', { name: 'x' }, h);
    expect(r1.status).toBe(201);
    expect(r2.status).toBe(201);
    expect(await r2.json()).toEqual(await r1.json());
    expect(r2.headers.get('location')).toBe(r1.headers.get('location'));
    expect(r2.headers.get('etag')).toBe(r1.headers.get('etag'));
    expect(r2.headers.get('idempotent-replayed')).toBe('true');
    expect(created - before).toBe(1);
  });

  it('same key, different body → 422; keys are per caller', async () => {
    const h = { 'idempotency-key': 'k-2' };
    expect((await kit.call(ADMIN_KEY, 'POST', '/v1/things', { name: 'y' }, h)).status).toBe(201);
    const res = await kit.call(ADMIN_KEY, 'POST', '/v1/things', { name: 'z' }, h);
    expect(res.status).toBe(422);
    expect((await res.json()).code).toBe('UNPROCESSABLE');
    // Another caller's same key is its own.
    const A = await kit.tenantWithAdmin('IdemCo');
    const mine = await kit.call(A.token, 'POST', `/v1/tenants/${A.tenantId}/api-keys`, { name: 'n', roleId: 'tenant-auditor' }, h);
    expect(mine.status).toBe(201);
    const again = await kit.call(A.token, 'POST', `/v1/tenants/${A.tenantId}/api-keys`, { name: 'n', roleId: 'tenant-auditor' }, h);
    expect((await again.json()).id).toBe((await mine.json()).id);
  });

  it('concurrent requests with one key run once; failures release the key', async () => {
    const before = created;
    const h = { 'idempotency-key': 'k-3' };
    const all = await Promise.all(Array.from({ length: 5 }, () => kit.call(ADMIN_KEY, 'POST', '/v1/things', { name: 'c' }, h)));
    const statuses = all.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(created - before).toBe(1);
    // A 400 is not stored: the same key with a fixed body runs.
    const bad = await kit.call(ADMIN_KEY, 'POST', '/v1/things', { nome: 1 }, { 'idempotency-key': 'k-4' });
    expect(bad.status).toBe(400);
    expect(await kit.store.get(keys.idempotency('apiKey:bootstrap-admin', 'k-4'))).toBeUndefined();
    expect((await kit.call(ADMIN_KEY, 'POST', '/v1/things', { nome: 1 }, { 'idempotency-key': 'k-4' })).status).toBe(400);
  });

  it('records expire through TTL (expiresAt), and an expired record is treated as absent', async () => {
    const h = { 'idempotency-key': 'k-5' };
    await kit.call(ADMIN_KEY, 'POST', '/v1/things', { name: 'e' }, h);
    const rec = await kit.store.get<{ expiresAt: number; state: string }>(keys.idempotency('apiKey:bootstrap-admin', 'k-5'));
    expect(rec?.state).toBe('done');
    expect(rec!.expiresAt - Date.now() / 1000).toBeGreaterThan(23 * 3600);
    await kit.store.update(keys.idempotency('apiKey:bootstrap-admin', 'k-5'), { set: { expiresAt: Math.floor(Date.now() / 1000) - 1 } });
    const before = created;
    const res = await kit.call(ADMIN_KEY, 'POST', '/v1/things', { name: 'different now' }, h);
    expect(res.status).toBe(201);
    expect(created - before).toBe(1);
  });
});

describe('rate limits', () => {
  it('token bucket per caller: RateLimit headers, then 429 with Retry-After', async () => {
    let now = 0;
    const buckets = new TokenBuckets({ capacity: 3, refillPerSecond: 1 }, () => now);
    const k2 = await createKit(t, { auth: { rateLimit: { capacity: 3, refillPerSecond: 1 } } });
    // Swap in a controllable clock through a fresh middleware: the config path is covered by k2.
    const res1 = await k2.call(ADMIN_KEY, 'GET', '/v1/permissions');
    expect(res1.status).toBe(200);
    expect(res1.headers.get('ratelimit-policy')).toBe('"default";q=3;w=3');
    expect(res1.headers.get('ratelimit')).toMatch(/^"default";r=2;t=\d+$/);
    await k2.call(ADMIN_KEY, 'GET', '/v1/permissions');
    await k2.call(ADMIN_KEY, 'GET', '/v1/permissions');
    const limited = await k2.call(ADMIN_KEY, 'GET', '/v1/permissions');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toMatch(/problem\+json/);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('ratelimit')).toMatch(/^"default";r=0;/);
    expect((await limited.json()).code).toBe('RATE_LIMITED');
    // Another caller has its own bucket.
    const A = await k2.tenantWithAdmin('RateCo');
    expect((await k2.call(A.token, 'GET', `/v1/tenants/${A.tenantId}/roles`)).status).toBe(200);

    // The bucket refills at the configured rate.
    for (let i = 0; i < 3; i++) expect(buckets.take('c').allowed).toBe(true);
    const denied = buckets.take('c');
    expect(denied).toMatchObject({ allowed: false, remaining: 0 });
    expect(denied.retryAfterSeconds).toBeCloseTo(1, 5);
    now += 1000;
    expect(buckets.take('c').allowed).toBe(true);
    expect(buckets.take('c').allowed).toBe(false);
    now += 10_000;
    expect(buckets.take('c').remaining).toBe(2);
  });
});
