/** Keeps bench/access.ts working: a small run, with the budgets it reports. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { benchAccess } from '../../bench/access.ts';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { storeOf } from './fixtures.test-util.ts';

let t: TestTable;
beforeAll(async () => {
  t = await createTestTable();
});
afterAll(() => t?.drop());

it('bench/access.ts runs and reports the budgets', async () => {
  const figures = await benchAccess({ store: storeOf(t), users: 150, scopes: 101, roles: 30, groups: 20, samples: 20, concurrency: 4, throughputMs: 200 });
  expect(figures['check.cold.waves']).toBeLessThanOrEqual(3);
  expect(figures['check.warm.waves']).toBe(1);
  expect(figures['check.bounded.requests']).toBe(0);
  expect(figures['checkMany100.waves']).toBeLessThanOrEqual(3);
  expect(figures['raw.get.ops_per_s']).toBeGreaterThan(0);
  expect(figures['naive002.requests']).toBeGreaterThan(0);
}, 120_000);
