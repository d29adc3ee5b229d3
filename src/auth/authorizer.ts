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
import { ruleMatches, type CompiledRule, type Rule } from '../access/model.ts';
import { PLATFORM_ADMIN_PERMISSION } from '../access/system.ts';
import { GatehouseError } from '../errors.ts';
import type { Authorizer, Principal } from '../http/caller.ts';
import { keys } from '../store/keys.ts';
import type { Item, Store } from '../store/store.ts';
import type { Hierarchy, ScopeRef } from '../tenancy/model.ts';

/** The part of the decision engine the authorizer needs (`createAccess(...).engine`). */
export interface CheckEngine {
  check(input: { tenantId: string; userId: string; permission: string; scope: ScopeRef; maxStalenessMs?: number }): Promise<{ allowed: boolean; reason?: string }>;
  /** `check`'s answer when a cache entry within `maxStalenessMs` gives it synchronously; else undefined. */
  checkCached?(input: { tenantId: string; userId: string; permission: string; scope: ScopeRef; maxStalenessMs?: number }): { allowed: boolean } | undefined;
  /**
   * A user's effective rules at a scope (strongly consistent unless `maxStalenessMs`): the ALLOW
   * patterns of their active grants not wholly covered by a DENY, and the DENYs. What API-key
   * minting compares a key's role against.
   */
  listPermissions(input: { tenantId: string; userId: string; scope: ScopeRef }): Promise<{ permissions: string[]; denied: string[] }>;
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

/**
 * What granting `wanted` (a role's compiled rules) would give beyond `held` (the grantor's rules),
 * with the engine's own semantics (`ruleMatches`, DENY beats ALLOW): a rule key or pattern is
 * held when `held` allows it as a literal (`m:*` needs `m:*` or `*`; `m:a:b` is not enough). Two
 * kinds of excess, both returned as rule keys:
 *  - an ALLOW of `wanted` that `held` does not allow (denied, or not granted at all);
 *  - a DENY of `held` that `wanted` would allow: the grantor holds `gatehouse:*` minus
 *    `gatehouse:roles:write`, so a role with `gatehouse:*` and no such DENY grants more than they hold.
 * Patterns only nest or are disjoint (`*` ⊃ `m:*` ⊃ `m:a:*` ⊃ `m:a:b`), so the two cases are complete.
 */
export function rulesBeyond(held: Pick<Rule, 'key' | 'effect'>[], wanted: Pick<Rule, 'key' | 'effect'>[]): string[] {
  const out = new Set<string>();
  for (const r of wanted) if (r.effect === 'ALLOW' && !rulesAllow(held, r.key)) out.add(r.key);
  for (const d of held) if (d.effect === 'DENY' && rulesAllow(wanted, d.key)) out.add(d.key);
  return [...out].sort();
}

/** A tenant-bound API key never acts as platform admin, whatever its role says (see apiKeyAllows). */
const KEY_NEVER: Rule = { key: PLATFORM_ADMIN_PERMISSION, effect: 'DENY' };

/** What a caller may put into an API key at a tenant: see `grantorAt`. */
export interface Grantor {
  /** The rule keys `rules` (a role's compiled rules) grant beyond what the caller holds; empty = allowed. */
  lacking(rules: Pick<Rule, 'key' | 'effect'>[]): Promise<string[]>;
}

export function createAuthorizer(o: AuthorizerOptions) {
  const { store, hierarchy: h, engine } = o;
  const tenantScope = (tenantId: string): ScopeRef => ({ kind: h.tenantKind, id: tenantId });
  const maxStalenessMs = o.maxStalenessMs || undefined;

  async function engineAllows(tenantId: string, userId: string, permission: string): Promise<boolean> {
    if (!engine) return false;
    try {
      return (await engine.check({ tenantId, userId, permission, scope: tenantScope(tenantId), maxStalenessMs })).allowed;
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

  /** A user's effective rules at the tenant itself (strongly consistent); nothing for ids the engine refuses. */
  async function userRulesAt(tenantId: string, userId: string): Promise<Rule[]> {
    if (!engine) return [];
    try {
      const held = await engine.listPermissions({ tenantId, userId, scope: tenantScope(tenantId) });
      return [...held.denied.map((key) => ({ key, effect: 'DENY' as const })), ...held.permissions.map((key) => ({ key, effect: 'ALLOW' as const }))];
    } catch (e) {
      if (e instanceof GatehouseError && (e.code === 'VALIDATION' || e.code === 'NOT_FOUND')) return [];
      throw e;
    }
  }

  /**
   * The escalation rule of API keys: a caller may only mint a key whose role grants nothing the
   * caller does not hold at the tenant's scope. Resolves what the caller holds (one wave when the
   * engine's entry is cached: run it alongside the tenant and role reads); `lacking(rules)` then
   * compares. The bootstrap key and platform admins hold everything (platform-only roles are refused
   * by the key service for everyone). A user's rules are the engine's (assignments, groups, tenant
   * grant at the tenant scope, windows, status); an API key's are its role's, never platform admin.
   */
  async function grantorAt(p: Principal, tenantId: string): Promise<Grantor> {
    const everything: Grantor = { lacking: async () => [] };
    const only = (held: Rule[], fallback?: () => Promise<boolean>): Grantor => ({
      async lacking(rules) {
        const missing = rulesBeyond(held, [...rules, KEY_NEVER]);
        return missing.length && fallback && (await fallback()) ? [] : missing;
      },
    });
    if (p.platformAdmin) return everything;
    if (p.kind === 'apiKey') {
      if (!p.roleId || p.actor.tenantId !== tenantId) return only([]);
      const role = await store.get<Item>(keys.role(p.roleId));
      const usable = role && (role.scope === 'global' || role.tenantId === tenantId);
      return only(usable ? [...((role.effectivePermissions ?? role.permissions ?? []) as CompiledRule[]), KEY_NEVER] : []);
    }
    if (p.actor.type !== 'user') return only([]);
    const userId = p.actor.id;
    // As in decide(): a platform admin acts on every tenant but the platform tenant, where its own grants decide.
    return only(await userRulesAt(tenantId, userId), tenantId !== o.platformTenantId ? () => platformAdmin(userId) : undefined);
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

  /**
   * Allowed without a promise when that is already known: a platform admin, or a user whose grant
   * a cache entry within the bounded staleness confirms. Anything else (a denial included, which
   * may still be a platform admin's) is for `decide`.
   */
  function allowedAtOnce(p: Principal, permission: string, tenantId: string | undefined): true | undefined {
    if (p.platformAdmin) return true;
    if (!maxStalenessMs || !engine?.checkCached || !tenantId || p.kind === 'apiKey' || p.actor.type !== 'user') return undefined;
    try {
      return engine.checkCached({ tenantId, userId: p.actor.id, permission, scope: tenantScope(tenantId), maxStalenessMs })?.allowed || undefined;
    } catch {
      return undefined; // an id the engine refuses: decide() says no
    }
  }

  const authorizer: Authorizer = (p, permission, tenantId) => allowedAtOnce(p, permission, tenantId) ?? decide(p, permission, tenantId).then((d) => d.allowed);
  return { decide, authorizer, grantorAt };
}
