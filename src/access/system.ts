/**
 * Gatehouse's own permissions and the system roles (global, readable slug ids). Data, not code
 * paths: "is admin" is holding a role whose rules say `*`, checked like any other permission.
 */
import type { RequestContext } from '../context.ts';
import { GatehouseError } from '../errors.ts';
import type { Rule } from './model.ts';
import type { PermissionInput, PermissionsService } from './permissions.ts';
import type { RoleInput, RolesService } from './roles.ts';

const RESOURCES = [
  'tenants', 'scopes', 'users', 'memberships', 'grants', 'roles', 'groups', 'assignments', 'permissions', 'policies',
  'audit', 'licenses', 'subscriptions', 'settings', 'products', 'notifications', 'sessions', 'apikeys',
] as const;

export const PLATFORM_ADMIN_PERMISSION = 'gatehouse:platform:admin';
export const CHECK_PERMISSION = 'gatehouse:check';

export const SYSTEM_PERMISSIONS: PermissionInput[] = [
  { key: PLATFORM_ADMIN_PERMISSION, description: 'Act on every tenant and on platform data (catalog, global roles, policies)', isDangerous: true },
  { key: CHECK_PERMISSION, description: 'Ask the decision engine about any user of the tenant (check, explain, list)' },
  ...RESOURCES.flatMap((r) => [
    { key: `gatehouse:${r}:read`, description: `Read ${r}` },
    { key: `gatehouse:${r}:write`, description: `Create, change and delete ${r}`, isDangerous: r === 'roles' || r === 'assignments' || r === 'grants' || r === 'apikeys' },
  ]),
];

const allow = (key: string): Rule => ({ key, effect: 'ALLOW' });
const deny = (key: string): Rule => ({ key, effect: 'DENY' });

export const SYSTEM_ROLES: (RoleInput & { id: string })[] = [
  { id: 'platform-admin', name: 'platform-admin', description: 'Everything, on every tenant', permissions: [allow('*')], isSystem: true },
  { id: 'admin', name: 'admin', description: "Everything within the scope it is assigned at (002's isAdmin, as data)", permissions: [allow('*'), deny(PLATFORM_ADMIN_PERMISSION)], isSystem: true },
  { id: 'tenant-admin', name: 'tenant-admin', description: "Administers a tenant through Gatehouse's API", permissions: [allow('gatehouse:*'), deny(PLATFORM_ADMIN_PERMISSION)], isSystem: true },
  {
    id: 'tenant-auditor',
    name: 'tenant-auditor',
    description: "Reads a tenant's configuration and audit trail, and runs checks",
    permissions: [...RESOURCES.filter((r) => r !== 'apikeys').map((r) => allow(`gatehouse:${r}:read`)), allow(CHECK_PERMISSION)],
    isSystem: true,
  },
];

/** Idempotent: creates the missing system permissions and roles. */
export async function bootstrapAccess(deps: { permissions: PermissionsService; roles: RolesService }, ctx: RequestContext) {
  const createdPermissions = await deps.permissions.ensure(ctx, SYSTEM_PERMISSIONS);
  let createdRoles = 0;
  for (const r of SYSTEM_ROLES) {
    if (await deps.roles.read(r.id)) continue;
    try {
      await deps.roles.create(ctx, undefined, r);
      createdRoles++;
    } catch (e) {
      if (!(e instanceof GatehouseError && e.code === 'CONFLICT')) throw e;
    }
  }
  return { permissions: createdPermissions, roles: createdRoles };
}
