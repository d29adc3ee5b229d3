/**
 * Keeps bench/http.ts working (the figures of `npm run bench -- --json` are a contract): a short
 * run — one round of two seconds per target, no warm-up — with every figure name present. Its
 * values are not judged here (a loaded machine can finish a handful of warm checks in such a run):
 * that the bounded check sends no DynamoDB request is asserted by test/check-path.test.ts.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Store } from '../src/store/store.ts';
import { createTestTable, type TestTable } from './harness.ts';

let t: TestTable;
beforeAll(async () => {
  t = await createTestTable();
});
afterAll(() => t?.drop());

it('bench/http.ts runs and reports every figure', async () => {
  Object.assign(process.env, { BENCH_HTTP_SECONDS: '2', BENCH_HTTP_ROUNDS: '1', BENCH_HTTP_WARMUP_SECONDS: '0' });
  const { benchHttp } = await import('../bench/http.ts');
  const store = new Store({ doc: t.doc, tableName: t.tableName, cursorSecret: 'bench-http-test-secret-0123456789' });
  const f = await benchHttp({ store, endpoint: t.endpoint, log: () => {} });
  const names = ['http.hello.req_per_s', 'http.hello.bare.req_per_s', 'http.check.warm.req_per_s', 'http.check.warm.ddb_per_req', 'http.check.bounded.req_per_s', 'http.check.bounded.ddb_per_req', 'http.check.bounded_vs_hello', 'http.check.bounded_vs_bare_hello', 'http.hello.cpu_us_per_req', 'http.check.bounded.cpu_us_per_req', 'authorizer.p50_ms', 'authorizer.apikey.p50_ms'];
  for (const name of names) expect(Number.isFinite(f[name]) && f[name] >= 0, `${name} = ${f[name]}`).toBe(true);
  // The cheap targets serve thousands of requests in two seconds on any machine.
  for (const name of ['http.hello.req_per_s', 'http.hello.bare.req_per_s', 'http.check.bounded.req_per_s', 'authorizer.p50_ms']) expect(f[name], name).toBeGreaterThan(0);
}, 120_000);
