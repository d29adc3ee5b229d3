/**
 * Runs inside every test file's worker (vitest `setupFiles`). Each file has its own module graph,
 * so `totals` below counts exactly the requests this file's clients sent.
 */
import { afterAll, expect } from 'vitest';
import { totals } from '../src/store/accounting.ts';
import { dropLeftoverTables } from './harness.ts';

afterAll(async () => {
  await dropLeftoverTables();
  // Principle 1: nothing ever attempts a Scan. The accounting middleware refuses Scans before they
  // are sent and counts them, so an attempt swallowed by a catch somewhere still fails the file.
  // (A test that provokes one on purpose to check the refusal decrements totals.scans itself.)
  expect(totals.scans, 'Scan attempts in this test file (the product must never Scan)').toBe(0);
});
