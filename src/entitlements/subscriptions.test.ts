import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { measure } from '../store/accounting.ts';
import type { Store } from '../store/store.ts';
import type { Hierarchy } from '../tenancy/model.ts';
import { adminCtx, auditOf, facilities, putNode, putTenant, storeOf } from './fixtures.test-util.ts';
import { createLicenseService, createProductService } from './licenses.ts';
import { createSubscriptionService, type SubscriptionService } from './subscriptions.ts';

let t: TestTable;
let store: Store;
let h: Hierarchy;
let subs: SubscriptionService;
const ctx = adminCtx();
const days = (n: number) => new Date(Date.now() + n * 86400_000).toISOString();

beforeAll(async () => {
  t = await createTestTable();
  store = storeOf(t);
  h = facilities();
  subs = createSubscriptionService({ store, hierarchy: h, now: () => new Date() });
  await createProductService({ store }).create(ctx, { id: 'hvac', name: 'HVAC' });
});
afterAll(() => t?.drop());

describe('subscriptions (001)', () => {
  it('conformance: active subscriptions of a scope (one Query) and subscriptions of a module (GSI5)', async () => {
    const tenant = await putTenant(store, h);
    const project = await putNode(store, h, tenant.id, 'project');
    const b1 = await putNode(store, h, tenant.id, 'building', project);
    const b2 = await putNode(store, h, tenant.id, 'building', project);
    const module = `energy-${tenant.id}`;
    const s1 = await subs.create(ctx, tenant.id, { scope: { kind: 'building', id: b1.id }, moduleId: module, tier: 'premium', autoRenew: true, usageQuota: { sensors: 100 } });
    await subs.create(ctx, tenant.id, { scope: { kind: 'building', id: b1.id }, moduleId: 'cameras', status: 'trial' });
    await subs.create(ctx, tenant.id, { scope: { kind: 'building', id: b1.id }, moduleId: 'robots', status: 'expired' });
    await subs.create(ctx, tenant.id, { scope: { kind: 'building', id: b1.id }, moduleId: 'lapsed', startDate: '2024-01-01', endDate: '2024-02-01' });
    const s2 = await subs.create(ctx, tenant.id, { scope: { kind: 'building', id: b2.id }, moduleId: module });

    expect(s1).toMatchObject({ scope: { kind: 'building', id: b1.id }, moduleId: module, status: 'active', tier: 'premium', autoRenew: true, usageQuota: { sensors: 100 }, version: 1 });
    const active = await measure('subscriptions.activeOfScope', () => subs.ofScope(tenant.id, { kind: 'building', id: b1.id }, { status: 'active' }));
    expect(active.result.items.map((s) => s.moduleId)).toEqual([module]);
    expect(active.log.byCommand()).toEqual({ Query: 1 });
    expect((await subs.ofScope(tenant.id, { kind: 'building', id: b1.id })).items).toHaveLength(4);

    const ofModule = await measure('subscriptions.ofModule', () => subs.ofModule(module));
    expect(ofModule.result.items.map((s) => s.id).sort()).toEqual([s1.id, s2.id].sort());
    expect(ofModule.log.byCommand()).toEqual({ 'Query:GSI5': 1 });
  });

  it('may draw on a license of the same tenant; refuses duplicates (409 moduleId), unknown scopes and licenses', async () => {
    const tenant = await putTenant(store, h);
    const other = await putTenant(store, h);
    const project = await putNode(store, h, tenant.id, 'project');
    const foreign = await putNode(store, h, other.id, 'project');
    const lic = await createLicenseService({ store, hierarchy: h, now: () => new Date() }).create(ctx, tenant.id, { productId: 'hvac', seats: 2, startDate: '2025-01-01', endDate: days(60) });
    const s = await subs.create(ctx, tenant.id, { scope: { kind: 'project', id: project.id }, moduleId: 'hvac', licenseId: lic.id });
    expect(s.licenseId).toBe(lic.id);
    const before = (await auditOf(store, h.T, tenant.id)).length;
    await expect(subs.create(ctx, tenant.id, { scope: { kind: 'project', id: project.id }, moduleId: 'hvac' })).rejects.toMatchObject({ code: 'CONFLICT', details: { errors: [{ field: 'moduleId' }] } });
    await expect(subs.create(ctx, tenant.id, { scope: { kind: 'project', id: project.id }, moduleId: 'other', licenseId: 'missing' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(subs.create(ctx, tenant.id, { scope: { kind: 'project', id: foreign.id }, moduleId: 'other' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(subs.create(ctx, tenant.id, { scope: { kind: 'planet', id: 'x' }, moduleId: 'other' })).rejects.toMatchObject({ details: { errors: [{ field: 'scope.kind' }] } });
    expect(await auditOf(store, h.T, tenant.id)).toHaveLength(before);
    // Another tenant cannot read it through its opaque id.
    await expect(subs.get(other.id, s.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // A tenant-level subscription.
    const top = await subs.create(ctx, tenant.id, { scope: { kind: h.tenantKind, id: tenant.id }, moduleId: 'sso' });
    expect((await subs.get(tenant.id, top.id)).scope).toEqual({ kind: 'client', id: tenant.id });
  });

  it('updates with versions and deletes, each with its audit record', async () => {
    const tenant = await putTenant(store, h);
    const project = await putNode(store, h, tenant.id, 'project');
    const s = await subs.create(ctx, tenant.id, { scope: { kind: 'project', id: project.id }, moduleId: 'hvac' });
    const up = await subs.update(ctx, tenant.id, s.id, { tier: 'premium', usageQuota: { devices: 5 } }, 1);
    expect(up).toMatchObject({ tier: 'premium', usageQuota: { devices: 5 }, version: 2 });
    await expect(subs.update(ctx, tenant.id, s.id, { tier: 'x' }, 1)).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
    await expect(subs.update(ctx, tenant.id, s.id, { usageQuota: { devices: -1 } })).rejects.toMatchObject({ details: { errors: [{ field: 'usageQuota.devices' }] } });
    await subs.delete(ctx, tenant.id, s.id);
    await expect(subs.get(tenant.id, s.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await auditOf(store, h.T, tenant.id)).map((r) => r.action)).toEqual(['subscription.create', 'subscription.update', 'subscription.delete']);
  });
});
