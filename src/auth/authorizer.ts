/**
 * Authorization of Gatehouse's own admin API by Gatehouse's own decision engine (dogfooding).
 *
 * Every /v1 route declares `authorize('gatehouse:<resource>:<read|write>')`; the tenant it acts on
 * comes from the `tenantId` path parameter only (a body can never widen it). The decision:
 *  - the bootstrap key: allowed everywhere (it is the platform admin of first-run setup);
 *  - a user (JWT `sub`): `engine.check(user, permission, the tenant itself)` in the path's tenant.
 *    Routes without a tenant (platform catalog, global roles, tenant creation) and any tenant the
 *    user has no grant in need `gatehouse:platform:admin` in the PLATFORM TENANT
 *    (GATEHOUSE_PLATFORM_TENANT): a designated tenant whose admins are the platform's. A role
 *    assigned inside an ordinary tenant never reaches beyond it, so a tenant admin cannot make
 *    anyone a platform admin. Without a platform tenant only the bootstrap key is platform admin.
 *  - an API key: only in its own tenant, with its role's compiled rules (DENY beats ALLOW, the
 *    same wildcard semantics as the engine), read strongly consistent with the tenant's status on
 *    every request — a role change or a suspension applies to the next request.
 * Transient failures (RETRYABLE / BATCH_INCOMPLETE) propagate: the caller answers 503, never a deny.
 */
import { ruleMatches, type CompiledRule } from '../access/model.ts';
import { PLATFORM_ADMIN_PERMISSION } from '../access/system.ts';
import { GatehouseError } from '../errors.ts';
import type { Authorizer, Principal } from '../http/caller.ts';
import { keys } from '../store/keys.ts';
import type { Item, Store } from '../store/store.ts';
import type { Hierarchy, ScopeRef } from '../tenancy/model.ts';

/** The part of the decision engine the authorizer needs (`createAccess(...).engine`). */
export interface CheckEngine {
  check(input: { tenantId: string; userId: string; permission: string; scope: ScopeRef; maxStalenessMs?: number }): Promise<{ allowed: boolean; reason?: string }>;
}

export interface AuthorizerOptions {
  store: Store;
  hierarchy: Pick<Hierarchy, 'T' | 'tenantKind'>;
  engine?: CheckEngine;
  /** The tenant whose `gatehouse:platform:admin` holders are platform admins. */
  platformTenantId?: string;
  /**
   * Opt-in bounded staleness for users' admin-API permissions (engine `maxStalenessMs`): 0 /
   * absent = every request is validated against the version stamps (a revocation applies to the
   * next request); N = a decision validated within N ms may be reused without a DynamoDB request.
   */
  maxStalenessMs?: number;
}

export type Decision = { allowed: true; via: string } | { allowed: false; reason: string };

/** Evaluates compiled rules: any matching DENY wins, else any matching ALLOW. */
export function rulesAllow(rules: Pick<CompiledRule, 'key' | 'effect'>[], permission: string): boolean {
  let allowed = false;
  for (const r of rules) {
    if (!ruleMatches(r.key, permission)) continue;
    if (r.effect === 'DENY') return false;
    allowed = true;
  }
  return allowed;
}

const ID = /^[A-Za-z0-9_.:-]{1,128}$/;

export function createAuthorizer(o: AuthorizerOptions) {
  const { store, hierarchy: h, engine } = o;
  const tenantScope = (tenantId: string): ScopeRef => ({ kind: h.tenantKind, id: tenantId });

  async function engineAllows(tenantId: string, userId: string, permission: string): Promise<boolean> {
    if (!engine || !ID.test(tenantId) || !ID.test(userId)) return false;
    try {
      return (await engine.check({ tenantId, userId, permission, scope: tenantScope(tenantId), ...(o.maxStalenessMs ? { maxStalenessMs: o.maxStalenessMs } : {}) })).allowed;
    } catch (e) {
      // An id the engine refuses (VALIDATION) or cannot find is simply not a grant.
      if (e instanceof GatehouseError && (e.code === 'VALIDATION' || e.code === 'NOT_FOUND')) return false;
      throw e;
    }
  }

  const platformAdmin = (userId: string) =>
    o.platformTenantId ? engineAllows(o.platformTenantId, userId, PLATFORM_ADMIN_PERMISSION) : Promise.resolve(false);

  async function apiKeyAllows(p: Principal, permission: string, tenantId: string | undefined): Promise<Decision> {
    const own = p.actor.tenantId;
    if (!tenantId || !own || tenantId !== own) return { allowed: false, reason: 'api-key-bound-to-another-tenant' };
    if (!p.roleId) return { allowed: false, reason: 'no-role' };
    const [role, tenant] = await Promise.all([store.get<Item>(keys.role(p.roleId)), store.get<Item>(keys.tenant(h.T, tenantId))]);
    if (!tenant) return { allowed: false, reason: 'tenant-not-found' };
    if (tenant.status === 'suspended') return { allowed: false, reason: 'tenant-suspended' };
    if (!role || !(role.scope === 'global' || role.tenantId === tenantId)) return { allowed: false, reason: 'role-not-found' };
    const rules = (role.effectivePermissions ?? role.permissions ?? []) as CompiledRule[];
    // A tenant-bound key never acts as platform admin, whatever its role says.
    if (permission === PLATFORM_ADMIN_PERMISSION) return { allowed: false, reason: 'platform-only' };
    return rulesAllow(rules, permission) ? { allowed: true, via: `role:${p.roleId}` } : { allowed: false, reason: 'no-grant' };
  }

  /** The decision with its reason (the Lambda authorizer and tests use it). */
  async function decide(p: Principal, permission: string, tenantId: string | undefined): Promise<Decision> {
    if (p.platformAdmin) return { allowed: true, via: 'platform-admin' };
    if (p.kind === 'apiKey') return apiKeyAllows(p, permission, tenantId);
    if (p.actor.type !== 'user') return { allowed: false, reason: 'unknown-principal' };
    const userId = p.actor.id;
    if (tenantId) {
      if (await engineAllows(tenantId, userId, permission)) return { allowed: true, via: 'engine' };
      // Tenant-scoped permissions are never granted by `*` in the platform tenant alone: only
      // explicit platform admins act on other tenants.
      if (tenantId !== o.platformTenantId && (await platformAdmin(userId))) return { allowed: true, via: 'platform-admin' };
      return { allowed: false, reason: 'no-grant' };
    }
    // Platform routes: platform admins only.
    return (await platformAdmin(userId)) ? { allowed: true, via: 'platform-admin' } : { allowed: false, reason: 'platform-only' };
  }

  const authorizer: Authorizer = async (p, permission, tenantId) => (await decide(p, permission, tenantId)).allowed;
  return { decide, authorizer };
}
