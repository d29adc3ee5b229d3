/**
 * Demo data for `npm start`: a facilities tenant with its scope tree and users, roles, a group and
 * assignments that make one check allowed and one denied, and a license with a subscription.
 * Idempotent: restarting on a kept data dir writes nothing new.
 */
import { systemContext } from '../context.ts';
import type { Gatehouse } from '../gatehouse.ts';
import type { ScopeRef } from '../tenancy/model.ts';
import { seedAccessDemo } from './access.ts';
import { seedEntitlementsDemo } from './entitlements.ts';
import { seedTenancyDemo } from './tenancy.ts';

export interface DemoExample {
  title: string;
  path: string;
  body: unknown;
}

export interface DemoResult {
  summary: string[];
  examples: DemoExample[];
}

export async function seedDemo(gh: Gatehouse): Promise<DemoResult> {
  const ctx = systemContext('demo-seed');
  const t = await seedTenancyDemo({ tenancy: gh.tenancy, identity: gh.identity }, ctx);
  if (!t.tenantId) return { summary: [`\nDemo data skipped: ${t.skipped ?? 'no demo for this hierarchy'}.`], examples: [] };
  const tenantId = t.tenantId;

  // One branch of the tree, top-down, read from a device's stored ancestor path.
  const device = await gh.tenancy.scopes.get(tenantId, t.deviceIds[0]);
  const branch: ScopeRef[] = [...device.path.filter((s) => s.kind !== gh.hierarchy.tenantKind), { kind: device.kind, id: device.id }];
  // The demo users include inactive, disabled and ended ones (realistic): the checks use active users.
  const now = new Date().toISOString();
  const users = await Promise.all(t.userIds.slice(0, 12).map((id) => gh.identity.users.get(id)));
  const activeIds = users.filter((u) => u.status === 'active' && (!u.endDate || u.endDate > now)).map((u) => u.id);
  const ids = { tenantId, scopes: branch, userIds: activeIds };
  const access = await seedAccessDemo(gh.access, ctx, ids);
  const ent = await seedEntitlementsDemo(gh.entitlements, ctx, { ...ids, tenantKind: gh.hierarchy.tenantKind });

  const checkPath = `/v1/tenants/${tenantId}/check`;
  return {
    summary: [
      `\nDemo tenant "${(await gh.tenancy.tenants.get(tenantId)).name}" (${tenantId})${t.created ? ' created' : ''}: ` +
        `${t.projectIds.length} projects, ${t.buildingIds.length} buildings, ${t.zoneIds.length} zones, ${t.deviceIds.length} devices, ${t.userIds.length} users,`,
      `  roles viewer/operator, a group, assignments; license ${ent.licenseId}.`,
    ],
    examples: [
      { title: 'An allowed check', path: checkPath, body: access.checks.allowed },
      { title: 'A denied check (explicit DENY)', path: checkPath, body: access.checks.denied },
    ],
  };
}
