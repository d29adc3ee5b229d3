/**
 * Demo entitlements for the demo tenant: a product, a license ending in 20 days (so the expiry
 * job has something to announce) with seats, a module subscription drawing on it, and settings
 * with a lock at the tenant and an override below. Idempotent: safe on every start.
 */
import type { RequestContext } from '../context.ts';
import { GatehouseError } from '../errors.ts';
import type { Entitlements } from '../entitlements/index.ts';
import type { DemoTenancyIds } from './access.ts';

export const DEMO_PRODUCT = 'demo-suite';
const DEMO_LICENSE_NAME = 'Demo Suite';

export interface EntitlementsDemo {
  licenseId: string;
  subscriptionId: string;
  /** GET paths worth trying. */
  examples: { title: string; path: string }[];
}

const ignore = (...codes: string[]) => (e: unknown) => {
  if (!(e instanceof GatehouseError && codes.includes(e.code))) throw e;
};

export async function seedEntitlementsDemo(ent: Entitlements, ctx: RequestContext, ids: DemoTenancyIds & { tenantKind: string }): Promise<EntitlementsDemo> {
  const { tenantId, scopes, userIds } = ids;
  const tenant = { kind: ids.tenantKind, id: tenantId };
  await ent.products.create(ctx, { id: DEMO_PRODUCT, name: 'Demo Suite', description: 'Everything the demo tenant uses' }).catch(ignore('CONFLICT'));

  const existing = (await ent.licenses.ofTenant(tenantId, { limit: 100 })).items.find((l) => l.name === DEMO_LICENSE_NAME);
  const license = existing ?? (await ent.licenses.create(ctx, tenantId, {
    productId: DEMO_PRODUCT,
    name: DEMO_LICENSE_NAME,
    seats: 10,
    startDate: new Date(Date.now() - 345 * 86400_000).toISOString().slice(0, 10),
    endDate: new Date(Date.now() + 20 * 86400_000).toISOString(),
  }));
  for (const userId of userIds.slice(0, 2)) await ent.licenses.assignSeat(ctx, tenantId, license.id, userId).catch(ignore('CONFLICT'));

  const sub = await ent.subscriptions
    .create(ctx, tenantId, { scope: scopes[0], moduleId: 'energy', tier: 'premium', autoRenew: true, usageQuota: { sensors: 500 }, licenseId: license.id })
    .catch(async (e) => {
      ignore('CONFLICT')(e);
      return (await ent.subscriptions.ofScope(tenantId, scopes[0])).items.find((s) => s.moduleId === 'energy')!;
    });

  const setting = async (scope: typeof tenant, key: string, input: Parameters<Entitlements['settings']['put']>[4]) => {
    try {
      await ent.settings.get(tenantId, scope, key);
    } catch (e) {
      ignore('NOT_FOUND')(e);
      await ent.settings.put(ctx, tenantId, scope, key, input);
    }
  };
  await setting(tenant, 'security.mfaRequired', { value: true, valueType: 'boolean', isOverridable: false, description: 'Locked for the whole tenant' });
  await setting(tenant, 'ui.theme', { value: 'light', valueType: 'string' });
  await setting(tenant, 'locale', { value: 'en-GB', valueType: 'string' });
  await setting(scopes[0], 'ui.theme', { value: 'dark', valueType: 'string' });
  const leaf = scopes.at(-1)!;
  await setting(leaf, 'alerts.thresholds', { value: { temperature: 28, humidity: 70 }, valueType: 'json' });
  if (userIds[0]) await setting({ kind: 'user', id: userIds[0] }, 'locale', { value: 'fr-FR', valueType: 'string' });

  const T = `/v1/tenants/${tenantId}`;
  return {
    licenseId: license.id,
    subscriptionId: sub.id,
    examples: [
      { title: 'Licenses of the tenant', path: `${T}/licenses` },
      { title: 'Effective settings with explain', path: `${T}/effective-settings/${leaf.kind}/${leaf.id}?explain=true${userIds[0] ? `&userId=${userIds[0]}` : ''}` },
      { title: 'Active subscriptions of a scope', path: `${T}/subscriptions?scopeKind=${scopes[0].kind}&scopeId=${scopes[0].id}&status=active` },
      { title: 'Audit trail (newest first)', path: `${T}/audit` },
      { title: 'Export the audit trail as CSV', path: `${T}/audit/export?format=csv` },
    ],
  };
}
