import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { measure } from '../store/accounting.ts';
import type { Store } from '../store/store.ts';
import type { Hierarchy } from '../tenancy/model.ts';
import { facilities, putTenant, storeOf } from '../entitlements/fixtures.test-util.ts';
import type { RequestContext } from '../context.ts';
import { auditPut, redact } from './record.ts';
import { createAuditService, type AuditRecord, type AuditService } from './service.ts';
import { CSV_COLUMNS } from './export.ts';

let t: TestTable;
let store: Store;
let h: Hierarchy;
let audit: AuditService;
let tenantId: string;
const alice: RequestContext = { actor: { id: 'alice', type: 'user' }, requestId: 'r-a', ip: '192.0.2.1', userAgent: 'ua' };
const bob: RequestContext = { actor: { id: 'bob', type: 'user' }, requestId: 'r-b' };
const base = Date.parse('2025-03-01T00:00:00.000Z');
const HOUR = 3600_000;

async function write(ctx: RequestContext, tid: string, i: number, extra: Record<string, unknown> = {}) {
  await store.transactWrite([auditPut(ctx, { T: h.T, tenantId: tid, action: 'thing.update', entityType: 'thing', entityId: `e${i}`, after: { n: i, ...extra } }, new Date(base + i * HOUR))]);
}

beforeAll(async () => {
  t = await createTestTable();
  store = storeOf(t);
  h = facilities();
  audit = createAuditService({ store, hierarchy: h });
  tenantId = (await putTenant(store, h)).id;
  // 60 records an hour apart, alternating actors; one in another tenant by alice.
  await Promise.all(Array.from({ length: 60 }, (_, i) => write(i % 2 ? bob : alice, tenantId, i)));
  await write(alice, (await putTenant(store, h)).id, 5);
});
afterAll(() => t?.drop());

const ns = (rs: AuditRecord[]) => rs.map((r) => (r.after as { n: number }).n);

describe('audit trail', () => {
  it('conformance: recent audit of a tenant in a date range, newest first; each page is one parallel wave over every shard', async () => {
    const from = new Date(base + 10 * HOUR).toISOString();
    const to = new Date(base + 49 * HOUR).toISOString();
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const { result, log } = await measure('audit.range', () => audit.range(tenantId, { from, to, limit: 7, cursor }));
      expect(log.waves).toBe(1);
      // Every shard on the first page; later pages skip the shards already exhausted.
      if (pages === 0) expect(log.byCommand()).toEqual({ Query: 16 });
      else expect(log.count).toBeLessThanOrEqual(16);
      seen.push(...ns(result.items));
      cursor = result.cursor;
      pages++;
    } while (cursor && pages < 20);
    expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => 49 - i));
    expect(pages).toBe(6);
  });

  it('spreads one tenant over shards (principle 9) and keeps the record fields', async () => {
    const page = await audit.range(tenantId, { limit: 100 });
    expect(page.items).toHaveLength(60);
    expect(page.cursor).toBeNull();
    const r = page.items.find((x) => x.entityId === 'e0')!;
    expect(r).toMatchObject({ actorId: 'alice', actorType: 'user', action: 'thing.update', entityType: 'thing', requestId: 'r-a', ip: '192.0.2.1', userAgent: 'ua', status: 'success', severity: 'info' });
    expect(r.expiresAt).toBe(Math.floor(base / 1000) + 365 * 86400);
    expect(r).not.toHaveProperty('PK');
  });

  it('a date range by day covers the whole last day; bad ranges are 400 naming the field', async () => {
    const page = await audit.range(tenantId, { from: '2025-03-02', to: '2025-03-02', limit: 100 });
    expect(ns(page.items)).toEqual(Array.from({ length: 24 }, (_, i) => 47 - i));
    await expect(audit.range(tenantId, { from: 'yesterday' })).rejects.toMatchObject({ details: { errors: [{ field: 'from' }] } });
    await expect(audit.range(tenantId, { from: '2025-03-03', to: '2025-03-01' })).rejects.toMatchObject({ details: { errors: [{ field: 'from' }] } });
    await expect(audit.range(tenantId, { cursor: 'x.y' })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
  });

  it("conformance: a user's activity is one GSI2 Query (an index, not filter-after-fetch), newest first, kept to the tenant", async () => {
    const { result, log } = await measure('audit.activity', () => audit.activity('alice', { limit: 100, tenantId }));
    expect(ns(result.items)).toEqual(Array.from({ length: 30 }, (_, i) => 58 - 2 * i));
    expect(log.byCommand()).toEqual({ 'Query:GSI2': 1 });
    expect((await audit.activity('alice', { limit: 100 })).items).toHaveLength(31);
    const ranged = await audit.activity('bob', { from: new Date(base + 50 * HOUR).toISOString(), limit: 100 });
    expect(ns(ranged.items)).toEqual([59, 57, 55, 53, 51]);
  });

  it("an API key's activity index is sharded (principle 9) and read in one wave", async () => {
    const key: RequestContext = { actor: { id: 'key-1', type: 'apiKey' } };
    const tid = (await putTenant(store, h)).id;
    await Promise.all(Array.from({ length: 20 }, (_, i) => write(key, tid, 100 + i)));
    const { result, log } = await measure('audit.activity.apiKey', () => audit.activity('key-1', { actorType: 'apiKey', limit: 100 }));
    expect(ns(result.items)).toEqual(Array.from({ length: 20 }, (_, i) => 119 - i));
    expect(log.waves).toBe(1);
    expect(log.byCommand()).toEqual({ 'Query:GSI2': 8 });
    expect((await audit.activity('key-1', { limit: 100 })).items).toEqual([]);
  });

  it('exports JSON Lines and CSV, every record once, newest first', async () => {
    const lines: string[] = [];
    for await (const l of audit.exportLines(tenantId, { format: 'jsonl' })) lines.push(l);
    const recs = lines.map((l) => JSON.parse(l) as AuditRecord);
    expect(ns(recs)).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i));
    const csv: string[] = [];
    for await (const l of audit.exportLines(tenantId, { format: 'csv', from: '2025-03-03' })) csv.push(l);
    expect(csv[0]).toBe(`${CSV_COLUMNS.join(',')}\r\n`);
    expect(csv).toHaveLength(1 + 12);
    expect(csv[1]).toContain('"{""n"":59}"');
  });

  it('redacts secrets from before/after summaries and neutralises CSV formulas', async () => {
    expect(redact({ password: 'x', nested: { secretHash: 'y', ok: 1 }, PK: 'k' })).toEqual({ password: '[redacted]', nested: { secretHash: '[redacted]', ok: 1 } });
    const tid = (await putTenant(store, h)).id;
    await write(alice, tid, 1, { note: '=HYPERLINK("x")' });
    const csv: string[] = [];
    for await (const l of audit.exportLines(tid, { format: 'csv' })) csv.push(l);
    // Inside a JSON cell the formula is not at the cell's start: quoted, not evaluated.
    expect(csv[1]).toMatch(/,"\{[^\r\n]*=HYPERLINK[^\r\n]*\}"\r\n$/);
    const { toCsvRow } = await import('./export.ts');
    expect(toCsvRow({ action: '=cmd' } as unknown as AuditRecord)).toContain("'=cmd");
  });
});
