/**
 * The access module: permission catalog, roles, groups, assignments, policy metadata and the
 * decision engine, over one Store. The composition root wires `accessRoutes(access)` and may use
 * `access.engine` as the HTTP authorizer.
 */
import type { RequestContext } from '../context.ts';
import type { Store } from '../store/store.ts';
import type { Hierarchy } from '../tenancy/model.ts';
import { createAssignments } from './assignments.ts';
import type { AccessDeps } from './common.ts';
import { createEngine, type EngineOptions } from './engine.ts';
import { createGroups } from './groups.ts';
import { createPermissions } from './permissions.ts';
import { createPolicies } from './policies.ts';
import { createRoles } from './roles.ts';
import { bootstrapAccess } from './system.ts';

export interface AccessOptions {
  store: Store;
  hierarchy: Hierarchy;
  cache?: EngineOptions['cache'];
  now?: () => Date;
}

export function createAccess(opts: AccessOptions) {
  const deps: AccessDeps = { store: opts.store, hierarchy: opts.hierarchy, now: opts.now ?? (() => new Date()) };
  const permissions = createPermissions(deps);
  const roles = createRoles(deps, permissions);
  const groups = createGroups(deps);
  const assignments = createAssignments(deps);
  const policies = createPolicies(deps);
  const engine = createEngine({ store: opts.store, hierarchy: opts.hierarchy, now: opts.now, cache: opts.cache });
  return {
    hierarchy: opts.hierarchy,
    store: opts.store,
    permissions,
    roles,
    groups,
    assignments,
    policies,
    engine,
    /** Idempotent: Gatehouse's own permissions and the system roles (platform-admin, admin, tenant-admin, tenant-auditor). */
    bootstrap: (ctx: RequestContext) => bootstrapAccess({ permissions, roles }, ctx),
  };
}

export type Access = ReturnType<typeof createAccess>;

export { accessRoutes, ACCESS_PERMISSIONS } from './routes.ts';
export type { Decision, Explanation, Reason } from './engine.ts';
export { SYSTEM_PERMISSIONS, SYSTEM_ROLES, PLATFORM_ADMIN_PERMISSION, CHECK_PERMISSION } from './system.ts';
