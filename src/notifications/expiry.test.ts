import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { measure } from '../store/accounting.ts';
import type { Store } from '../store/store.ts';
import type { Hierarchy } from '../tenancy/model.ts';
import { adminCtx, auditOf, facilities, putTenant, putUser, storeOf } from '../entitlements/fixtures.test-util.ts';
import { createLicenseService, createProductService, type LicenseService } from '../entitlements/licenses.ts';
import { createNotificationAudit, type NotificationAuditService } from './audit.ts';
import { parseWindow, runLicenseExpiry, type LicenseExpiryDeps } from './expiry.ts';
import { createOutboxMailer, listOutbox, type Mailer } from './transport.ts';

let t: TestTable;
let store: Store;
let h: Hierarchy;
let licenses: LicenseService;
let naudit: NotificationAuditService;
let deps: LicenseExpiryDeps;
const ctx = adminCtx();
const days = (n: number) => new Date(Date.now() + n * 86400_000).toISOString();
const failing: Mailer = { name: 'broken', send: async () => { throw new Error('SES: MessageRejected: Email address is not verified'); } };

beforeAll(async () => {
  t = await createTestTable();
  store = storeOf(t);
  h = facilities();
  const now = () => new Date();
  licenses = createLicenseService({ store, hierarchy: h, now });
  naudit = createNotificationAudit({ store, T: h.T, now });
  deps = { store, hierarchy: h, now, mailer: createOutboxMailer(store), sender: 'licenses@example.com' };
  await createProductService({ store }).create(ctx, { id: 'suite', name: 'Suite' });
});
afterAll(() => t?.drop());

describe('license-expiry job', () => {
  it('parses windows', () => {
    expect(parseWindow('30d')).toBe(30 * 86400_000);
    expect(parseWindow('12h')).toBe(12 * 3600_000);
    expect(() => parseWindow('soon')).toThrow(/30d/);
  });

  it('sends once per admin, skips on rerun, flips ended licenses to expired, and audits every attempt', async () => {
    const a = await putTenant(store, h, 'Acme');
    const ann = await putUser(store, h, a.id, { userType: 'client_admin', email: 'ann@acme.test', firstName: 'Ann' });
    await putUser(store, h, a.id, { userType: 'client_admin', email: 'al@acme.test' });
    await putUser(store, h, a.id, { userType: 'internal', email: 'not-admin@acme.test' });
    await putUser(store, h, a.id, { userType: 'client_admin', email: 'gone@acme.test', status: 'disabled' });
    const soon = await licenses.create(ctx, a.id, { productId: 'suite', name: 'Suite Pro', seats: 5, startDate: '2025-01-01', endDate: days(10) });
    await licenses.create(ctx, a.id, { productId: 'suite', seats: 5, startDate: '2025-01-01', endDate: days(60) });
    const lapsing = await licenses.create(ctx, a.id, { productId: 'suite', seats: 5, startDate: '2025-01-01', endDate: new Date(Date.now() + 800).toISOString() });
    const b = await putTenant(store, h, 'Nobody Home');
    const orphan = await licenses.create(ctx, b.id, { productId: 'suite', seats: 1, startDate: '2025-01-01', endDate: days(5) });
    await new Promise((r) => setTimeout(r, 900));

    const first = await runLicenseExpiry(deps, { within: '30d' });
    expect(first.expired).toEqual([lapsing.id]);
    expect(await licenses.get(a.id, lapsing.id)).toMatchObject({ status: 'expired' });
    expect((await auditOf(store, h.T, a.id)).filter((r) => r.action === 'license.expire')).toHaveLength(1);
    expect(first.sent).toBe(2);
    expect(first.notices.filter((n) => n.status === 'sent').map((n) => n.recipient).sort()).toEqual(['al@acme.test', 'ann@acme.test']);
    expect(first.notices.find((n) => n.licenseId === orphan.id)).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/no recipients/) });

    const outbox = await listOutbox(store, { tenantId: a.id });
    expect(outbox.items).toHaveLength(2);
    const toAnn = outbox.items.find((m) => m.to.email === 'ann@acme.test')!;
    expect(toAnn).toMatchObject({ from: 'licenses@example.com', subject: expect.stringContaining('Acme: your Suite Pro license expires in 10 days') });
    expect(toAnn.text).toContain('Hello Ann,');
    expect((await listOutbox(store)).items.length).toBeGreaterThanOrEqual(2);

    const sentRecs = (await naudit.ofTenant(a.id)).items.filter((r) => r.deliveryStatus === 'sent');
    expect(sentRecs).toHaveLength(2);
    const annRec = sentRecs.find((r) => r.recipientEmail === 'ann@acme.test')!;
    expect(annRec).toMatchObject({ notificationType: 'license_expiry', tenantName: 'Acme', userId: ann.id, recipientFirstName: 'Ann', senderEmail: 'licenses@example.com', transport: 'outbox', metadata: { licenseId: soon.id, threshold: '30d' } });
    expect(annRec.messageId).toMatch(/^outbox-/);

    const second = await runLicenseExpiry(deps, { within: '30d' });
    expect(second.sent).toBe(0);
    expect(second.expired).toEqual([]);
    expect(second.notices.filter((n) => n.licenseId === soon.id).map((n) => n.status)).toEqual(['skipped', 'skipped']);
    expect(second.notices.find((n) => n.licenseId === soon.id)!.reason).toMatch(/already notified/);
    expect((await listOutbox(store, { tenantId: a.id })).items).toHaveLength(2);
    // A new threshold is a new notice.
    const third = await runLicenseExpiry(deps, { within: '14d' });
    expect(third.notices.filter((n) => n.licenseId === soon.id && n.status === 'sent')).toHaveLength(2);
  });

  it('records a failure from a failing transport and sends it on the next run', async () => {
    const c = await putTenant(store, h, 'Cyan');
    await putUser(store, h, c.id, { userType: 'client_admin', email: 'cy@cyan.test' });
    const l = await licenses.create(ctx, c.id, { productId: 'suite', seats: 1, startDate: '2025-01-01', endDate: days(3) });
    const broken = await runLicenseExpiry({ ...deps, mailer: failing }, { within: '7d' });
    const mine = broken.notices.filter((n) => n.licenseId === l.id);
    expect(mine).toEqual([expect.objectContaining({ status: 'failed', error: expect.stringContaining('MessageRejected') })]);
    const failedRec = (await naudit.ofTenant(c.id)).items[0];
    expect(failedRec).toMatchObject({ deliveryStatus: 'failed', errorMessage: expect.stringContaining('not verified'), recipientEmail: 'cy@cyan.test' });
    expect(failedRec.messageId).toBeUndefined();

    const retried = await runLicenseExpiry(deps, { within: '7d' });
    expect(retried.notices.filter((n) => n.licenseId === l.id)).toEqual([expect.objectContaining({ status: 'sent', messageId: expect.any(String) })]);
    const again = await runLicenseExpiry(deps, { within: '7d' });
    expect(again.notices.filter((n) => n.licenseId === l.id).map((n) => n.status)).toEqual(['skipped']);
    expect((await listOutbox(store, { tenantId: c.id })).items).toHaveLength(1);
  });

  it('two concurrent runs never send the same notice twice', async () => {
    const d = await putTenant(store, h, 'Duo');
    await putUser(store, h, d.id, { userType: 'client_admin', email: 'd@duo.test' });
    const l = await licenses.create(ctx, d.id, { productId: 'suite', seats: 1, startDate: '2025-01-01', endDate: days(2) });
    const [r1, r2] = await Promise.all([runLicenseExpiry(deps, { within: '5d' }), runLicenseExpiry(deps, { within: '5d' })]);
    const sent = [...r1.notices, ...r2.notices].filter((n) => n.licenseId === l.id && n.status === 'sent');
    expect(sent).toHaveLength(1);
    expect((await listOutbox(store, { tenantId: d.id })).items).toHaveLength(1);
  });

  it('dry run writes and sends nothing', async () => {
    const e = await putTenant(store, h, 'Echo');
    await putUser(store, h, e.id, { userType: 'client_admin', email: 'e@echo.test' });
    const l = await licenses.create(ctx, e.id, { productId: 'suite', seats: 1, startDate: '2025-01-01', endDate: days(1) });
    const dry = await runLicenseExpiry(deps, { within: '2d', dryRun: true });
    expect(dry.notices.filter((n) => n.licenseId === l.id).map((n) => n.status)).toEqual(['would-send']);
    expect((await listOutbox(store, { tenantId: e.id })).items).toHaveLength(0);
    expect((await naudit.ofTenant(e.id)).items).toHaveLength(0);
  });

  it('conformance: all notification audits (GSI1), by account (GSI2), failed / skipped (GSI3, every shard in one wave), sent in a date range', async () => {
    const all = await measure('notifications.all', () => naudit.all({ limit: 100 }));
    expect(all.log.byCommand()).toEqual({ 'Query:GSI1': 1 });
    const ids = all.result.items.map((r) => r.id);
    expect(ids).toEqual([...ids].sort().reverse());
    const statuses = new Set(all.result.items.map((r) => r.deliveryStatus));
    expect(statuses).toEqual(new Set(['sent', 'failed', 'skipped']));

    const failed = await measure('notifications.failed', () => naudit.byStatus('failed', { limit: 100 }));
    expect(failed.log.waves).toBe(1);
    expect(failed.log.byCommand()).toEqual({ 'Query:GSI3': 4 });
    expect(failed.result.items.length).toBeGreaterThan(0);
    expect(failed.result.items.every((r) => r.deliveryStatus === 'failed')).toBe(true);
    const skipped = await naudit.byStatus('skipped', { limit: 100 });
    expect(skipped.items.length).toBeGreaterThan(0);
    expect(skipped.items.every((r) => r.deliveryStatus === 'skipped')).toBe(true);

    const sentAll = (await naudit.byStatus('sent', { limit: 100 })).items;
    const times = sentAll.map((r) => r.sentAt);
    expect(times).toEqual([...times].sort().reverse());
    const mid = times[Math.floor(times.length / 2)];
    const ranged = await measure('notifications.sentInRange', () => naudit.byStatus('sent', { from: mid, to: new Date().toISOString(), limit: 100 }));
    expect(ranged.log.waves).toBe(1);
    expect(ranged.result.items.map((r) => r.id)).toEqual(sentAll.filter((r) => r.sentAt >= mid).map((r) => r.id));

    const byAccount = await measure('notifications.byAccount', () => naudit.ofTenant(all.result.items[0].tenantId));
    expect(byAccount.log.byCommand()).toEqual({ 'Query:GSI2': 1 });
    expect(byAccount.result.items.every((r) => r.tenantId === all.result.items[0].tenantId)).toBe(true);
  });
});
