import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { seedEntitlementsDemo } from '../demo/entitlements.ts';
import { adminCtx, facilities, putNode, putTenant, putUser, storeOf } from './fixtures.test-util.ts';
import { createEntitlements } from './index.ts';

let t: TestTable;
beforeAll(async () => {
  t = await createTestTable();
});
afterAll(() => t?.drop());

it('seeds the demo entitlements idempotently', async () => {
  const store = storeOf(t);
  const h = facilities();
  const ent = createEntitlements({ store, hierarchy: h });
  const tenant = await putTenant(store, h);
  const p = await putNode(store, h, tenant.id, 'project');
  const b = await putNode(store, h, tenant.id, 'building', p);
  const users = [await putUser(store, h, tenant.id), await putUser(store, h, tenant.id)];
  const ids = { tenantId: tenant.id, tenantKind: h.tenantKind, scopes: [{ kind: 'project', id: p.id }, { kind: 'building', id: b.id }], userIds: users.map((u) => u.id) };
  const first = await seedEntitlementsDemo(ent, adminCtx(), ids);
  const second = await seedEntitlementsDemo(ent, adminCtx(), ids);
  expect(second.licenseId).toBe(first.licenseId);
  expect(second.subscriptionId).toBe(first.subscriptionId);
  expect((await ent.licenses.get(tenant.id, first.licenseId)).seatsUsed).toBe(2);
  const eff = await ent.settings.effective(tenant.id, { kind: 'building', id: b.id }, { userId: users[0].id });
  expect(eff.settings).toMatchObject({ 'ui.theme': { value: 'dark' }, locale: { value: 'fr-FR' }, 'security.mfaRequired': { value: true } });
});
