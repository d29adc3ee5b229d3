import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { measure } from '../store/accounting.ts';
import { keys } from '../store/keys.ts';
import type { Store } from '../store/store.ts';
import type { Hierarchy } from '../tenancy/model.ts';
import { adminCtx, auditOf, platform, putNode, putTenant, putUser, storeOf } from './fixtures.test-util.ts';
import { createLicenseService, createProductService, type LicenseService } from './licenses.ts';

let t: TestTable;
let store: Store;
let h: Hierarchy;
let licenses: LicenseService;
const ctx = adminCtx();
const days = (n: number) => new Date(Date.now() + n * 86400_000).toISOString();

beforeAll(async () => {
  t = await createTestTable();
  store = storeOf(t);
  h = platform();
  licenses = createLicenseService({ store, hierarchy: h, now: () => new Date() });
  await createProductService({ store }).create(ctx, { id: 'analytics', name: 'Analytics' });
});
afterAll(() => t?.drop());

describe('licenses (000)', () => {
  it('creates a license with its audit record in the same write, and refuses bad input naming the field', async () => {
    const tenant = await putTenant(store, h);
    const l = await licenses.create(ctx, tenant.id, { productId: 'analytics', seats: 5, startDate: '2025-01-01', endDate: days(90) });
    expect(l).toMatchObject({ tenantId: tenant.id, productId: 'analytics', seats: 5, seatsUsed: 0, status: 'active', version: 1 });
    const audit = await auditOf(store, h.T, tenant.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: 'license.create', entityType: 'license', entityId: l.id, actorId: 'admin-1', ip: '203.0.113.7', userAgent: 'vitest', requestId: ctx.requestId });
    expect(audit[0].expiresAt).toBeGreaterThan(Date.now() / 1000 + 364 * 86400);

    await expect(licenses.create(ctx, tenant.id, { productId: 'nope', seats: 5, startDate: '2025-01-01', endDate: days(9) })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(licenses.create(ctx, tenant.id, { productId: 'analytics', seats: 0, startDate: '2025-01-01', endDate: days(9) })).rejects.toMatchObject({
      code: 'VALIDATION', details: { errors: [{ field: 'seats' }] },
    });
    await expect(licenses.create(ctx, tenant.id, { seats: 1, startDate: '2025-01-01', endDate: days(9) })).rejects.toMatchObject({ details: { errors: [{ field: 'productId' }] } });
    await expect(licenses.create(ctx, 'no-such-tenant', { productId: 'analytics', seats: 1, startDate: '2025-01-01', endDate: days(9) })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // Nothing half-written: still one record, one license.
    expect(await auditOf(store, h.T, tenant.id)).toHaveLength(1);
    expect((await licenses.ofTenant(tenant.id)).items).toHaveLength(1);
  });

  it('conformance: licenses by account (one base-table Query), by enterprise (GSI2), expiring before a date (GSI3, every shard in one wave)', async () => {
    const tenant = await putTenant(store, h);
    const ent = await putNode(store, h, tenant.id, 'enterprise');
    const a = await licenses.create(ctx, tenant.id, { enterpriseId: ent.id, seats: 3, startDate: '2025-01-01', endDate: days(10) });
    const b = await licenses.create(ctx, tenant.id, { enterpriseId: ent.id, seats: 3, startDate: '2025-01-01', endDate: days(40) });
    const c = await licenses.create(ctx, tenant.id, { productId: 'analytics', seats: 3, startDate: '2025-01-01', endDate: days(20) });

    const byAccount = await measure('licenses.byAccount', () => licenses.ofTenant(tenant.id));
    expect(byAccount.result.items.map((l) => l.id).sort()).toEqual([a.id, b.id, c.id].sort());
    expect(byAccount.log.byCommand()).toEqual({ Query: 1 });

    const byEnterprise = await measure('licenses.byEnterprise', () => licenses.ofOwner({ enterpriseId: ent.id }));
    expect(byEnterprise.result.items.map((l) => l.id).sort()).toEqual([a.id, b.id].sort());
    expect(byEnterprise.log.byCommand()).toEqual({ 'Query:GSI2': 1 });

    const byProduct = await licenses.ofOwner({ productId: 'analytics' }, { tenantId: tenant.id });
    expect(byProduct.items.map((l) => l.id)).toEqual([c.id]);

    // GSI3 is global: filter to this test's licenses; order is by end date.
    const expiring = await measure('licenses.expiringBefore', () => licenses.endingBefore(days(30), { limit: 100 }));
    const mine = expiring.result.items.filter((l) => l.tenantId === tenant.id).map((l) => l.id);
    expect(mine).toEqual([a.id, c.id]);
    expect(expiring.log.waves).toBe(1);
    expect(expiring.log.byCommand()).toEqual({ 'Query:GSI3': 4 });
    const ends = expiring.result.items.map((l) => l.endDate);
    expect(ends).toEqual([...ends].sort());
  });

  it('pages expiring licenses across shards with a signed composite cursor, in end-date order, without repeats', async () => {
    const tenant = await putTenant(store, h);
    const made = [];
    for (let i = 0; i < 9; i++) made.push(await licenses.create(ctx, tenant.id, { productId: 'analytics', seats: 1, startDate: '2025-01-01', endDate: days(200 + i) }));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    const before = days(209);
    do {
      const { result, log } = await measure('page', () => licenses.endingBefore(before, { limit: 4, cursor }));
      expect(log.waves).toBe(1);
      seen.push(...result.items.filter((l) => l.tenantId === tenant.id).map((l) => l.id));
      cursor = result.cursor;
      pages++;
    } while (cursor && pages < 50);
    expect(seen).toEqual(made.map((l) => l.id));
    await expect(licenses.endingBefore(days(100), { limit: 4, cursor: 'forged.cursor' })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
  });

  it('50 concurrent seat assignments on a 10-seat license: exactly 10 succeed, the rest are 409 naming seats', async () => {
    const tenant = await putTenant(store, h);
    const l = await licenses.create(ctx, tenant.id, { productId: 'analytics', seats: 10, startDate: '2025-01-01', endDate: days(30) });
    const users = await Promise.all(Array.from({ length: 50 }, () => putUser(store, h, tenant.id)));
    const results = await Promise.allSettled(users.map((u) => licenses.assignSeat(ctx, tenant.id, l.id, u.id)));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason);
    expect(ok).toHaveLength(10);
    expect(failed).toHaveLength(40);
    for (const e of failed) expect(e).toMatchObject({ code: 'CONFLICT', details: { errors: [{ field: 'seats' }] } });
    const after = await licenses.get(tenant.id, l.id);
    expect(after.seatsUsed).toBe(10);
    const seats = await store.queryAll({ pk: keys.seatsOfLicense(l.id).pk });
    expect(seats).toHaveLength(10);
    const audit = await auditOf(store, h.T, tenant.id);
    expect(audit.filter((r) => r.action === 'license.seat.assign')).toHaveLength(10);
  });

  it('seats: one per user, released and reassigned; an expired license refuses with 422 naming license', async () => {
    const tenant = await putTenant(store, h);
    const other = await putTenant(store, h);
    const u = await putUser(store, h, tenant.id);
    const stranger = await putUser(store, h, other.id);
    const l = await licenses.create(ctx, tenant.id, { productId: 'analytics', seats: 1, startDate: '2025-01-01', endDate: days(30) });
    await licenses.assignSeat(ctx, tenant.id, l.id, u.id);
    await expect(licenses.assignSeat(ctx, tenant.id, l.id, u.id)).rejects.toMatchObject({ code: 'CONFLICT', details: { errors: [{ field: 'userId' }] } });
    await expect(licenses.assignSeat(ctx, tenant.id, l.id, stranger.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(licenses.update(ctx, tenant.id, l.id, { seats: 1 })).resolves.toMatchObject({ seats: 1 });
    await licenses.releaseSeat(ctx, tenant.id, l.id, u.id);
    await expect(licenses.releaseSeat(ctx, tenant.id, l.id, u.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await licenses.get(tenant.id, l.id)).seatsUsed).toBe(0);
    await licenses.assignSeat(ctx, tenant.id, l.id, u.id);
    expect((await licenses.seats(tenant.id, l.id)).items.map((s) => s.userId)).toEqual([u.id]);

    const past = await licenses.create(ctx, tenant.id, { productId: 'analytics', seats: 5, startDate: '2024-01-01', endDate: '2024-06-01' });
    expect(past.status).toBe('expired');
    const before = (await auditOf(store, h.T, tenant.id)).length;
    await expect(licenses.assignSeat(ctx, tenant.id, past.id, u.id)).rejects.toMatchObject({ code: 'UNPROCESSABLE', details: { errors: [{ field: 'license' }] } });
    // Nothing half-written: no seat item, no counter move, no audit record.
    expect(await store.get(keys.licenseSeat(past.id, u.id))).toBeUndefined();
    expect((await licenses.get(tenant.id, past.id)).seatsUsed).toBe(0);
    expect(await auditOf(store, h.T, tenant.id)).toHaveLength(before);
    // An active license whose end date passed (not yet flipped by the job) refuses too.
    const lapsing = await licenses.create(ctx, tenant.id, { productId: 'analytics', seats: 5, startDate: '2025-01-01', endDate: new Date(Date.now() + 1500).toISOString() });
    await new Promise((r) => setTimeout(r, 1600));
    await expect(licenses.assignSeat(ctx, tenant.id, lapsing.id, u.id)).rejects.toMatchObject({ code: 'UNPROCESSABLE' });
  });

  it('updates with optimistic versions, never below the assigned seats; renews and expires; deletes only without seats', async () => {
    const tenant = await putTenant(store, h);
    const u = await putUser(store, h, tenant.id);
    const l = await licenses.create(ctx, tenant.id, { productId: 'analytics', seats: 2, startDate: '2025-01-01', endDate: days(30) });
    await licenses.assignSeat(ctx, tenant.id, l.id, u.id);
    const v = (await licenses.get(tenant.id, l.id)).version;
    await expect(licenses.update(ctx, tenant.id, l.id, { seats: 3 }, v - 1)).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
    const up = await licenses.update(ctx, tenant.id, l.id, { seats: 3, endDate: days(60) }, v);
    expect(up).toMatchObject({ seats: 3, version: v + 1 });
    expect(await store.get(keys.license(h.T, tenant.id, l.id))).toMatchObject({ GSI3SK: `${up.endDate}#${l.id}` });
    await expect(licenses.delete(ctx, tenant.id, l.id)).rejects.toMatchObject({ code: 'CONFLICT', details: { errors: [{ field: 'seats' }] } });
    await licenses.releaseSeat(ctx, tenant.id, l.id, u.id);
    await licenses.delete(ctx, tenant.id, l.id);
    await expect(licenses.get(tenant.id, l.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
