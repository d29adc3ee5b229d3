/**
 * Dogfooding: an `Authorizer` for src/http/caller.ts backed by the access module. A platform admin
 * may do anything; a user acting on a tenant needs the route's permission at the tenant scope (the
 * engine, strongly consistent: one wave when cached); an API key bound to a tenant is judged by the
 * role it holds there (one strongly consistent GetItem of the role: its compiled rules, DENY first).
 *
 *   setAuthorizer(accessAuthorizer(access));
 */
import type { Authorizer } from '../http/caller.ts';
import { keys } from '../store/keys.ts';
import type { Access } from './index.ts';
import { ruleMatches, type RoleRecord } from './model.ts';

export function accessAuthorizer(access: Access): Authorizer {
  const tenantKind = access.hierarchy.tenantKind;
  return async (principal, permission, tenantId) => {
    if (principal.platformAdmin) return true;
    if (!tenantId) return false;
    const bound = principal.actor.tenantId;
    if (bound !== undefined && bound !== tenantId) return false;
    if (principal.actor.type === 'user') {
      return (await access.engine.check({ tenantId, userId: principal.actor.id, permission, scope: { kind: tenantKind, id: tenantId } })).allowed;
    }
    if (principal.actor.type === 'apiKey' && principal.roleId && bound === tenantId) {
      const role = await access.store.get<RoleRecord>(keys.role(principal.roleId));
      if (!role || (role.scope === 'tenant' && role.tenantId !== tenantId)) return false;
      const hits = role.effectivePermissions.filter((r) => ruleMatches(r.key, permission));
      return hits.length > 0 && hits.every((r) => r.effect === 'ALLOW');
    }
    return false;
  };
}
