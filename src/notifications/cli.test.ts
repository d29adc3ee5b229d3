/** `gatehouse jobs license-expiry` and `gatehouse audit export|list`, run in-process against a test table. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import type { CliContext } from '../cli/context.ts';
import { main } from '../cli/main.ts';
import { progressLine } from '../cli/jobs.ts';
import { adminCtx, facilities, putTenant, putUser, storeOf } from '../entitlements/fixtures.test-util.ts';
import { createLicenseService, createProductService } from '../entitlements/licenses.ts';
import { listOutbox } from './transport.ts';
import { handler as _typecheck, createLicenseExpiryHandler } from './lambda.ts';

let t: TestTable;
let tenantId: string;
const ctx = adminCtx();

async function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  let out = '';
  let err = '';
  const c: CliContext = { out: (s) => void (out += s), err: (s) => void (err += s), env };
  const code = await main(['node', 'gatehouse', ...args, '--endpoint', t.endpoint, '--table', t.tableName], c);
  return { code, out, err };
}

beforeAll(async () => {
  t = await createTestTable();
  const store = storeOf(t);
  const h = facilities();
  tenantId = (await putTenant(store, h, 'Cli Corp')).id;
  await putUser(store, h, tenantId, { userType: 'client_admin', email: 'ops@cli.test' });
  await createProductService({ store }).create(ctx, { id: 'cli', name: 'CLI' });
  const licenses = createLicenseService({ store, hierarchy: h, now: () => new Date() });
  for (let i = 0; i < 3; i++) await licenses.create(ctx, tenantId, { productId: 'cli', seats: 2, startDate: '2025-01-01', endDate: new Date(Date.now() + (5 + i) * 86400_000).toISOString() });
});
afterAll(() => t?.drop());

describe('gatehouse jobs license-expiry', () => {
  it('sends through the outbox with a progress bar, then skips on rerun', async () => {
    const first = await run(['jobs', 'license-expiry', '--within', '30d', '--transport', 'outbox', '--from', 'cli@example.com']);
    expect(first.code, first.err).toBe(0);
    expect(first.out).toContain('sent 3, failed 0, skipped 0');
    expect(first.err).toContain('[########################] 100%  3/3 licenses');
    expect((await listOutbox(storeOf(t), { tenantId })).items).toHaveLength(3);
    const second = await run(['jobs', 'license-expiry', '--within', '30d', '--transport', 'outbox', '--json', '--no-progress']);
    expect(second.code).toBe(0);
    expect(second.err).toBe('');
    expect(JSON.parse(second.out)).toMatchObject({ sent: 0, skipped: 3 });
  });

  it('refuses bad usage with exit code 2', async () => {
    expect((await run(['jobs', 'license-expiry', '--within', 'soon'])).code).toBe(2);
    expect((await run(['jobs', 'license-expiry', '--within', '3d', '--transport', 'pigeon'])).code).toBe(2);
    expect((await run(['jobs', 'license-expiry'])).code).toBe(2);
  });

  it('runs as a Lambda handler', async () => {
    const store = storeOf(t);
    const h = facilities();
    const fn = createLicenseExpiryHandler(() => ({ store, hierarchy: h, now: () => new Date(), mailer: { name: 'fake', send: async () => ({ messageId: 'm-1' }) } }));
    const res = await fn({ within: '30d', dryRun: true });
    expect(res).toMatchObject({ licenses: 3, sent: 0, skipped: 3, notices: 3 });
    expect(typeof _typecheck).toBe('function');
  });

  it('draws a progress bar', () => {
    expect(progressLine(1, 4, 'x', 8)).toBe('\r[##......]  25%  x');
  });
});

describe('gatehouse audit', () => {
  it('exports a tenant as JSON Lines to a file and CSV to stdout, with progress on stderr', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gh-audit-'));
    const file = path.join(dir, 'audit.jsonl');
    const r = await run(['audit', 'export', '--tenant', tenantId, '-o', file]);
    expect(r.code, r.err).toBe(0);
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.every((l) => l.tenantId === tenantId)).toBe(true);
    expect(r.err).toMatch(/100%\s+\d+ records\n$/);
    const csv = await run(['audit', 'export', '--tenant', tenantId, '--format', 'csv', '--no-progress']);
    const rows = csv.out.trim().split('\r\n');
    expect(rows[0]).toMatch(/^at,id,tenantId/);
    expect(rows).toHaveLength(lines.length + 1);
    expect((await run(['audit', 'export', '--tenant', tenantId, '--format', 'xml'])).code).toBe(2);
  });

  it('lists a page', async () => {
    const r = await run(['audit', 'list', '--tenant', tenantId, '-n', '2']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('license.create');
    expect(r.out).toContain('next page: --cursor ');
  });
});
