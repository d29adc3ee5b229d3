import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { measure } from '../store/accounting.ts';
import type { Store } from '../store/store.ts';
import type { Hierarchy, ScopeNodeRecord, TenantRecord } from '../tenancy/model.ts';
import { adminCtx, auditOf, facilities, putNode, putTenant, putUser, storeOf } from './fixtures.test-util.ts';
import { createSettingService, type SettingService } from './settings.ts';

let t: TestTable;
let store: Store;
let h: Hierarchy;
let settings: SettingService;
let tenant: TenantRecord;
let project: ScopeNodeRecord;
let building: ScopeNodeRecord;
let zone: ScopeNodeRecord;
const ctx = adminCtx();
const ref = (n: ScopeNodeRecord) => ({ kind: n.kind, id: n.id });

beforeAll(async () => {
  t = await createTestTable();
  store = storeOf(t);
  h = facilities();
  settings = createSettingService({ store, hierarchy: h, now: () => new Date() });
  tenant = await putTenant(store, h);
  project = await putNode(store, h, tenant.id, 'project');
  building = await putNode(store, h, tenant.id, 'building', project);
  zone = await putNode(store, h, tenant.id, 'zone', building);
});
afterAll(() => t?.drop());

describe('settings (001)', () => {
  const tenantRef = () => ({ kind: h.tenantKind, id: tenant.id });

  it('stores typed values per scope; settings of a scope are one Query', async () => {
    await settings.put(ctx, tenant.id, tenantRef(), 'timezone', { value: 'UTC', valueType: 'string', description: 'Default timezone' });
    await settings.put(ctx, tenant.id, ref(project), 'timezone', { value: 'Europe/Paris', valueType: 'string' });
    await settings.put(ctx, tenant.id, ref(project), 'maxDevices', { value: 50, valueType: 'number' });
    await settings.put(ctx, tenant.id, ref(project), 'features', { value: { beta: true, list: [1, 2] }, valueType: 'json' });
    const { result, log } = await measure('settings.ofScope', () => settings.ofScope(tenant.id, ref(project)));
    expect(result.items.map((s) => [s.key, s.value, s.valueType])).toEqual([
      ['features', { beta: true, list: [1, 2] }, 'json'],
      ['maxDevices', 50, 'number'],
      ['timezone', 'Europe/Paris', 'string'],
    ]);
    expect(log.byCommand()).toEqual({ Query: 1 });
    const one = await settings.get(tenant.id, ref(project), 'maxDevices');
    expect(one).toMatchObject({ key: 'maxDevices', value: 50, isOverridable: true, version: 1, updatedBy: 'admin-1' });
  });

  it('effective settings: nearest wins, an ancestor lock wins over descendants, in two waves, with explain', async () => {
    await settings.put(ctx, tenant.id, tenantRef(), 'retentionDays', { value: 30, valueType: 'number', isOverridable: false });
    await settings.put(ctx, tenant.id, ref(building), 'timezone', { value: 'Europe/Berlin', valueType: 'string' });
    await settings.put(ctx, tenant.id, ref(zone), 'hvac.mode', { value: 'eco', valueType: 'string' });
    const { result, log } = await measure('settings.effective', () => settings.effective(tenant.id, ref(zone), { explain: true }));
    expect(log.waves).toBe(2);
    expect(log.byCommand()).toEqual({ GetItem: 1, Query: 4 });
    expect(result.chain).toEqual([tenantRef(), ref(project), ref(building), ref(zone)]);
    expect(result.settings.timezone).toMatchObject({ value: 'Europe/Berlin', source: ref(building) });
    expect(result.settings.retentionDays).toMatchObject({ value: 30, source: tenantRef() });
    expect(result.settings.maxDevices).toMatchObject({ value: 50, source: ref(project) });
    expect(result.settings['hvac.mode']).toMatchObject({ value: 'eco', source: ref(zone) });
    expect(result.explain!.timezone.map((s) => [s.scope.kind, s.outcome])).toEqual([
      ['client', 'overridden'],
      ['project', 'overridden'],
      ['building', 'applied'],
    ]);
    // With the path given by the caller (e.g. from a node already read): one wave.
    const fast = await measure('settings.effective.path', () => settings.effective(tenant.id, ref(zone), { path: zone.path }));
    expect(fast.log.waves).toBe(1);
    expect(fast.result.settings).toEqual(result.settings);
    // The tenant itself: one wave.
    const top = await measure('settings.effective.tenant', () => settings.effective(tenant.id, tenantRef()));
    expect(top.log.waves).toBe(1);
    expect(top.result.settings.timezone.value).toBe('UTC');
  });

  it('refuses to override a locked key below (409 naming key) and a wrong value type (400 naming value); nothing half-written', async () => {
    const before = (await auditOf(store, h.T, tenant.id)).length;
    await expect(settings.put(ctx, tenant.id, ref(building), 'retentionDays', { value: 90, valueType: 'number' })).rejects.toMatchObject({
      code: 'CONFLICT', status: 409, details: { errors: [{ field: 'key' }], lockedBy: tenantRef() },
    });
    await expect(settings.put(ctx, tenant.id, ref(building), 'maxDevices', { value: '12', valueType: 'number' })).rejects.toMatchObject({
      code: 'VALIDATION', status: 400, details: { errors: [{ field: 'value' }] },
    });
    await expect(settings.put(ctx, tenant.id, ref(building), 'flag', { value: 'yes', valueType: 'boolean' })).rejects.toMatchObject({ details: { errors: [{ field: 'value' }] } });
    // A different type than an ancestor's value for the key.
    await expect(settings.put(ctx, tenant.id, ref(building), 'maxDevices', { value: 'many', valueType: 'string' })).rejects.toMatchObject({
      code: 'VALIDATION', details: { errors: [{ field: 'valueType' }] },
    });
    await expect(settings.put(ctx, tenant.id, { kind: 'galaxy', id: 'x' }, 'k', { value: 1, valueType: 'number' })).rejects.toMatchObject({
      details: { errors: [{ field: 'scope.kind' }] },
    });
    await expect(settings.get(tenant.id, ref(building), 'retentionDays')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await auditOf(store, h.T, tenant.id)).toHaveLength(before);
  });

  it('a lock placed after a descendant override makes the descendant value ignored, and explain says why', async () => {
    await settings.put(ctx, tenant.id, ref(building), 'theme', { value: 'dark', valueType: 'string' });
    await settings.put(ctx, tenant.id, ref(project), 'theme', { value: 'light', valueType: 'string', isOverridable: false });
    const eff = await settings.effective(tenant.id, ref(zone), { explain: true });
    expect(eff.settings.theme).toMatchObject({ value: 'light', source: ref(project), lockedBy: ref(project) });
    expect(eff.explain!.theme.map((s) => s.outcome)).toEqual(['applied', 'ignored: locked above']);
  });

  it('user-level settings apply last, but never over a lock', async () => {
    const u = await putUser(store, h, tenant.id);
    await settings.put(ctx, tenant.id, { kind: 'user', id: u.id }, 'timezone', { value: 'Asia/Tokyo', valueType: 'string' });
    await expect(settings.put(ctx, tenant.id, { kind: 'user', id: u.id }, 'retentionDays', { value: 1, valueType: 'number' })).rejects.toMatchObject({ code: 'CONFLICT' });
    const { result, log } = await measure('settings.effective.user', () => settings.effective(tenant.id, ref(zone), { userId: u.id }));
    expect(log.waves).toBe(2);
    expect(result.settings.timezone).toMatchObject({ value: 'Asia/Tokyo', source: { kind: 'user', id: u.id } });
    expect(result.settings.retentionDays.value).toBe(30);
  });

  it('versions: If-Match, updates audited with before/after; delete; isolation between tenants', async () => {
    const s = await settings.get(tenant.id, ref(project), 'maxDevices');
    await expect(settings.put(ctx, tenant.id, ref(project), 'maxDevices', { value: 60, valueType: 'number' }, s.version + 5)).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
    const up = await settings.put(ctx, tenant.id, ref(project), 'maxDevices', { value: 60, valueType: 'number' }, s.version);
    expect(up).toMatchObject({ value: 60, version: s.version + 1, createdAt: s.createdAt });
    const rec = (await auditOf(store, h.T, tenant.id)).at(-1)!;
    expect(rec).toMatchObject({ action: 'setting.update', before: { value: 50 }, after: { value: 60 } });
    await settings.delete(ctx, tenant.id, ref(project), 'maxDevices');
    await expect(settings.get(tenant.id, ref(project), 'maxDevices')).rejects.toMatchObject({ code: 'NOT_FOUND' });

    const other = await putTenant(store, h);
    await expect(settings.put(ctx, other.id, ref(project), 'x', { value: 1, valueType: 'number' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(settings.effective(other.id, ref(zone))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await settings.ofScope(other.id, ref(project))).items).toEqual([]);
    await expect(settings.put(ctx, other.id, { kind: h.tenantKind, id: tenant.id }, 'x', { value: 1, valueType: 'number' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
