/**
 * Demo access data for the demo tenant: roles with a parent and a DENY, a group, assignments, so
 * that both an allowed and a denied check work out of the box. Idempotent (safe on every start).
 */
import type { Access } from '../access/index.ts';
import type { RequestContext } from '../context.ts';
import { GatehouseError } from '../errors.ts';
import type { ScopeRef } from '../tenancy/model.ts';

export interface DemoTenancyIds {
  tenantId: string;
  /** Scope nodes of the demo tree, top-down along one branch (e.g. project, building, device); at least one. */
  scopes: ScopeRef[];
  /** Users of the demo tenant; at least two. */
  userIds: string[];
}

export interface DemoCheck {
  userId: string;
  permission: string;
  scope: ScopeRef;
}

export interface AccessDemo {
  roles: { viewer: string; operator: string };
  groupId: string;
  /** Bodies for POST /v1/tenants/{tenantId}/check: one allowed, one denied. */
  checks: { allowed: DemoCheck; denied: DemoCheck };
}

const DEMO_PERMISSIONS = [
  { key: 'devices:read', description: 'See devices and their state' },
  { key: 'devices:write', description: 'Operate devices' },
  { key: 'devices:configure', description: 'Change device configuration', isDangerous: true },
  { key: 'page:dashboard', description: 'Dashboard page' },
  { key: 'page:reports', description: 'Reports page' },
  { key: 'page:admin', description: 'Administration page' },
];

const ignoreConflict = (e: unknown) => {
  if (!(e instanceof GatehouseError && e.code === 'CONFLICT')) throw e;
};

export async function seedAccessDemo(access: Access, ctx: RequestContext, ids: DemoTenancyIds): Promise<AccessDemo> {
  const { tenantId, scopes, userIds } = ids;
  if (!scopes.length || userIds.length < 2) throw new GatehouseError('CONFIG', 'The access demo needs at least one scope and two users');
  await access.bootstrap(ctx);
  await access.permissions.ensure(ctx, DEMO_PERMISSIONS);

  const role = async (name: string, input: Parameters<Access['roles']['create']>[2]) => {
    try {
      return (await access.roles.byName(tenantId, name)).id;
    } catch (e) {
      if (!(e instanceof GatehouseError && e.code === 'NOT_FOUND')) throw e;
      return (await access.roles.create(ctx, tenantId, input)).id;
    }
  };
  const viewer = await role('viewer', {
    name: 'viewer',
    description: 'Sees devices and the dashboard',
    permissions: [{ key: 'devices:read', effect: 'ALLOW' }, { key: 'page:dashboard', effect: 'ALLOW' }],
  });
  const operator = await role('operator', {
    name: 'operator',
    description: 'Operates devices (inherits viewer) but may not reconfigure them',
    parentRoleId: viewer,
    permissions: [{ key: 'devices:*', effect: 'ALLOW' }, { key: 'page:reports', effect: 'ALLOW' }, { key: 'devices:configure', effect: 'DENY' }],
  });

  // A viewers group at the top scope, with the second user in it.
  const [top] = scopes;
  const deepest = scopes[scopes.length - 1];
  const [operatorUser, viewerUser] = userIds;
  let groupId: string | undefined;
  for (const m of await access.groups.ofUser(tenantId, viewerUser, top)) {
    if ((await access.groups.get(tenantId, m.groupId)).name === 'Viewers') groupId = m.groupId;
  }
  if (!groupId) {
    groupId = (await access.groups.create(ctx, tenantId, { name: 'Viewers', description: 'Demo: read-only access', scope: top, roleIds: [viewer] })).id;
    await access.groups.addMember(ctx, tenantId, groupId, viewerUser);
  }
  const operatorScope = scopes[Math.min(1, scopes.length - 1)];
  await access.assignments.create(ctx, tenantId, { userId: operatorUser, roleId: operator, scope: operatorScope }).catch(ignoreConflict);
  await access.assignments.create(ctx, tenantId, { userId: operatorUser, roleId: 'tenant-auditor', scope: { kind: access.hierarchy.tenantKind, id: tenantId } }).catch(ignoreConflict);

  return {
    roles: { viewer, operator },
    groupId,
    checks: {
      allowed: { userId: operatorUser, permission: 'devices:write', scope: deepest },
      denied: { userId: operatorUser, permission: 'devices:configure', scope: deepest },
    },
  };
}
