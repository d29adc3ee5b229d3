/**
 * The decision engine: may user U do P in scope S, now?
 *
 * Only strongly consistent base-table reads decide. A cold resolution of (user, tenant, scopes):
 *   wave 1  BatchGet [tenant, user, tenant grant, 3 stamps, every target scope node]
 *           + Query USER#uid / ROLE# (assignments) + Query USER#uid / GROUP# (group edges)
 *   wave 2  BatchGet the roles of the assignments and grant on the targets' paths
 *           + Query GROUP#gid / ROLE# for each group whose (denormalized) scope is on a path
 *   wave 3  BatchGet the groups' roles (absent with no groups)
 * Role METADATA carries the compiled rules of its whole parent chain: no per-permission reads.
 *
 * The resolved grant set (windows included) is cached per (tenant, user, scope) in an LRU, with
 * the three stamps read in wave 1. A strongly consistent check then costs one wave: BatchGet of
 * the user / tenant-shard / global-shard stamps, compared with the cached ones — shared with the
 * concurrent checks that asked before it was sent (stamps.ts, createStampReader). Windows are
 * evaluated at `at` on every answer and an entry is dropped at its earliest future boundary, so a
 * cache never honours a grant outside its window. See docs/patterns-access.md for the settle guard.
 */
import { LRUCache } from 'lru-cache';
import { validation } from '../errors.ts';
import { CursorCodec } from '../store/cursor.ts';
import { keys, type Key } from '../store/keys.ts';
import type { Item, Store } from '../store/store.ts';
import type { Hierarchy, ScopeNodeRecord, ScopeRef, TenantRecord, UserRecord } from '../tenancy/model.ts';
import { checkId } from './common.ts';
import {
  isPermissionKey,
  pageKey,
  ruleCovers,
  ruleMatches,
  type AssignmentRecord,
  type CompiledRule,
  type GroupMemberRecord,
  type GroupRoleRecord,
  type RoleRecord,
  type TenantGrantRecord,
} from './model.ts';
import { checkedScopeKey, scopeItemKey, treePathOf } from './scopes.ts';
import { createStampReader, stampString, stamps } from './stamps.ts';

export type Reason =
  | 'allowed'
  | 'no-grant'
  | 'outside-window'
  | 'denied-by-rule'
  | 'user-disabled'
  | 'user-not-found'
  | 'not-a-member'
  | 'tenant-suspended'
  | 'tenant-not-found'
  | 'scope-not-in-tenant';

export type GrantType = 'assignment' | 'group' | 'tenantGrant';

/** Where an answer came from: a cold resolution, a cache entry validated by its stamps, or bounded staleness. */
export type DecisionSource = 'cold' | 'validated' | 'bounded';

export interface Decision {
  allowed: boolean;
  reason: Reason;
  permission: string;
  scope: ScopeRef;
  source: DecisionSource;
}

export interface DecidedBy {
  type: GrantType;
  assignmentId?: string;
  groupId?: string;
  tenantGrantId?: string;
  roleId: string;
  rule: { key: string; effect: 'ALLOW' | 'DENY'; definedBy: string };
  scope: ScopeRef;
  window?: { startAt?: string; expiresAt?: string };
}

export interface Explanation {
  allowed: boolean;
  reason: Reason;
  permission: string;
  scope: ScopeRef;
  at: string;
  decidedBy?: DecidedBy;
  /** Grants (assignments, groups' roles, tenant-grant roles) that apply on the scope's path. */
  grantsConsidered: number;
}

export interface CheckInput {
  tenantId: string;
  userId: string;
  permission: string;
  scope: ScopeRef;
  at?: Date;
  /** Opt-in: answer from a cache entry validated at most this long ago, with no request at all. */
  maxStalenessMs?: number;
}

export interface CheckManyInput {
  tenantId: string;
  userId: string;
  checks: { permission: string; scope: ScopeRef }[];
  at?: Date;
  maxStalenessMs?: number;
}

export interface EngineOptions {
  store: Store;
  hierarchy: Hierarchy;
  now?: () => Date;
  cache?: {
    /** LRU bound (entries = (tenant, user, scope) triples). Default 10,000. */
    maxEntries?: number;
    /**
     * An entry resolved less than this long after one of its stamps moved is used only once
     * (bounded staleness aside): it is re-resolved on the next check. Guards against caching a read
     * that overlapped a committing transaction. Default 1000 ms; must exceed writer clock skew.
     */
    settleMs?: number;
    /**
     * Validation reads (strongly consistent checks of cached entries) are shared by concurrent
     * checks: at most this many BatchGetItem requests of stamps in flight, later checks join the
     * next one (see `createStampReader`). Default 2; 0 = never shared (one BatchGetItem per check).
     */
    stampReadsInFlight?: number;
  };
}

interface Grant {
  type: GrantType;
  id: string;
  scope: ScopeRef;
  /** Position of the grant's scope on the target's path (0 = tenant). */
  depth: number;
  roleId: string;
  startAt?: number;
  endAt?: number;
  rules: CompiledRule[];
}

interface Entry {
  stamps: string;
  resolvedAt: number;
  validatedAt: number;
  provisional: boolean;
  validUntil: number;
  blocked?: Reason;
  /** The user's endDate (ms): denied when `at` is later. */
  userEndAt?: number;
  /** Deepest scope first, then assignment, group, tenant grant. */
  grants: Grant[];
}

export const MAX_CHECKS = 500;

const TYPE_ORDER: Record<GrantType, number> = { assignment: 0, group: 1, tenantGrant: 2 };
const refKey = (s: ScopeRef) => `${s.kind}#${s.id}`;
const keyStr = (k: Key) => `${k.PK}\u0000${k.SK}`;
const ms = (iso?: string) => (iso ? Date.parse(iso) : undefined);

/** What wave 1 reads for a (user, tenant): everything but the roles. */
interface UserTenantData {
  tenant?: TenantRecord;
  user?: UserRecord;
  grant?: TenantGrantRecord;
  assignments: AssignmentRecord[];
  groups: GroupMemberRecord[];
  stamps: string;
  stampsTouchedAt: number;
  nodes: Map<string, Item | undefined>;
}

export type Engine = ReturnType<typeof createEngine>;

export function createEngine(opts: EngineOptions) {
  const { store, hierarchy: h } = opts;
  const now = opts.now ?? (() => new Date());
  /** The clock in ms (no Date allocated per check unless a clock was injected). */
  const nowMs = opts.now ? () => opts.now!().getTime() : Date.now;
  const settleMs = opts.cache?.settleMs ?? 1000;
  const cache = new LRUCache<string, Entry>({ max: opts.cache?.maxEntries ?? 10_000 });
  const cacheKey = (tid: string, uid: string, s: ScopeRef) => `${tid}\u0000${uid}\u0000${refKey(s)}`;
  const tenantRef = (tid: string): ScopeRef => ({ kind: h.tenantKind, id: tid });

  const stampReader = createStampReader(store, h.T, { maxInFlight: opts.cache?.stampReadsInFlight });

  /** The stamps among wave 1's items ([user, tenant shard, global shard] keys), as the cache compares them. */
  function stampsOf(items: Item[], readKeys: Key[]) {
    const byKey = new Map(items.map((i) => [keyStr({ PK: String(i.PK), SK: String(i.SK) }), i]));
    let touched = 0;
    const [u, t, g] = readKeys.map((k) => {
      const it = byKey.get(keyStr(k));
      if (it?.updatedAt) touched = Math.max(touched, Date.parse(String(it.updatedAt)));
      return it?.stamp;
    });
    return { stamps: stampString(u, t, g), touched };
  }

  /** Wave 1. */
  async function readUserTenant(tid: string, uid: string, nodeRefs: ScopeRef[]): Promise<UserTenantData> {
    const stampKeys = stamps.readKeys(h.T, tid, uid);
    const nodeKeys = nodeRefs.map((s) => scopeItemKey(h, s)).filter((k): k is Key => !!k);
    const tenantKey = keys.tenant(h.T, tid);
    const userKey = keys.user(uid);
    const grantKey = keys.membershipOfUser(uid, h.T, tid);
    const aq = keys.assignmentsOfUser(uid);
    const gq = keys.groupsOfUser(uid);
    const [points, assignments, groups] = await Promise.all([
      store.batchGet<Item>([tenantKey, userKey, grantKey, ...stampKeys, ...nodeKeys]),
      store.queryAll<AssignmentRecord>({ pk: aq.pk, sk: { beginsWith: aq.skPrefix } }),
      store.queryAll<GroupMemberRecord>({ pk: gq.pk, sk: { beginsWith: gq.skPrefix } }),
    ]);
    const byKey = new Map(points.map((i) => [keyStr({ PK: String(i.PK), SK: String(i.SK) }), i]));
    const nodes = new Map<string, Item | undefined>();
    for (const s of nodeRefs) {
      const k = scopeItemKey(h, s);
      nodes.set(refKey(s), k ? byKey.get(keyStr(k)) : undefined);
    }
    const st = stampsOf(points, stampKeys);
    return {
      tenant: byKey.get(keyStr(tenantKey)) as TenantRecord | undefined,
      user: byKey.get(keyStr(userKey)) as UserRecord | undefined,
      grant: byKey.get(keyStr(grantKey)) as TenantGrantRecord | undefined,
      assignments: assignments.filter((a) => a.tenantId === tid),
      groups: groups.filter((g) => g.tenantId === tid),
      stamps: st.stamps,
      stampsTouchedAt: st.touched,
      nodes,
    };
  }

  /** Why nothing can be granted, independent of the permission (or undefined). */
  function blockedOf(d: UserTenantData, tid: string): Reason | undefined {
    if (!d.tenant) return 'tenant-not-found';
    if (d.tenant.status !== 'active') return 'tenant-suspended';
    if (!d.user) return 'user-not-found';
    if (d.user.status !== 'active') return 'user-disabled';
    if (d.user.tenantId !== tid && !d.grant) return 'not-a-member';
    return undefined;
  }

  /** The scopes a target's grants may come from: its ancestors (tenant first) and itself. */
  function pathOf(d: UserTenantData, tid: string, target: ScopeRef): ScopeRef[] | undefined {
    if (target.kind === h.tenantKind) return target.id === tid && d.tenant ? [target] : undefined;
    const node = d.nodes.get(refKey(target)) as ScopeNodeRecord | undefined;
    if (!node || node.tenantId !== tid || node.kind !== target.kind) return undefined;
    return [...node.path, target];
  }

  /** Waves 2 and 3: the roles of the given assignments, groups and tenant grant. */
  async function readRoles(tid: string, assignments: AssignmentRecord[], groups: GroupMemberRecord[], grantRoleIds: string[]) {
    const direct = new Set([...assignments.map((a) => a.roleId), ...grantRoleIds]);
    const [roles1, edgeLists] = await Promise.all([
      direct.size ? store.batchGet<RoleRecord>([...direct].map((r) => keys.role(r))) : Promise.resolve([] as RoleRecord[]),
      Promise.all(
        groups.map((g) => {
          const q = keys.groupRoles(g.groupId);
          return store.queryAll<GroupRoleRecord>({ pk: q.pk, sk: { beginsWith: q.skPrefix } });
        }),
      ),
    ]);
    const roles = new Map(roles1.map((r) => [r.id, r]));
    const groupRoles = new Map(groups.map((g, i) => [g.groupId, edgeLists[i].map((e) => e.roleId)]));
    const missing = [...new Set(edgeLists.flat().map((e) => e.roleId))].filter((r) => !roles.has(r));
    if (missing.length) for (const r of await store.batchGet<RoleRecord>(missing.map((m) => keys.role(m)))) roles.set(r.id, r);
    // A role of another tenant is never honoured (defence in depth: writes refuse it already).
    for (const [id, r] of roles) if (r.scope === 'tenant' && r.tenantId !== tid) roles.delete(id);
    return { roles, groupRoles };
  }

  function grantsFor(d: UserTenantData, tid: string, path: ScopeRef[], roles: Map<string, RoleRecord>, groupRoles: Map<string, string[]>): Grant[] {
    const depth = new Map(path.map((s, i) => [refKey(s), i]));
    const rulesOf = (rid: string) => roles.get(rid)?.effectivePermissions ?? [];
    const out: Grant[] = [];
    for (const a of d.assignments) {
      const dp = depth.get(refKey(a.scope));
      if (dp === undefined) continue;
      out.push({ type: 'assignment', id: a.id, scope: a.scope, depth: dp, roleId: a.roleId, startAt: ms(a.startAt), endAt: ms(a.endAt), rules: rulesOf(a.roleId) });
    }
    for (const g of d.groups) {
      const dp = depth.get(refKey(g.scope));
      if (dp === undefined) continue;
      for (const rid of groupRoles.get(g.groupId) ?? []) out.push({ type: 'group', id: g.groupId, scope: g.scope, depth: dp, roleId: rid, rules: rulesOf(rid) });
    }
    for (const rid of d.grant?.roleIds ?? []) {
      out.push({ type: 'tenantGrant', id: d.grant?.tenantGrantId ?? `${tid}:${d.user?.id}`, scope: tenantRef(tid), depth: 0, roleId: rid, rules: rulesOf(rid) });
    }
    return out.sort((x, y) => y.depth - x.depth || TYPE_ORDER[x.type] - TYPE_ORDER[y.type]);
  }

  /** Resolves (cold) the entries of several target scopes of one (tenant, user). */
  async function resolve(tid: string, uid: string, targets: ScopeRef[]): Promise<Map<string, Entry>> {
    const started = nowMs();
    const d = await readUserTenant(tid, uid, targets.filter((t) => t.kind !== h.tenantKind));
    const blocked = blockedOf(d, tid);
    const paths = new Map(targets.map((t) => [refKey(t), pathOf(d, tid, t)]));
    const onPaths = new Set([...paths.values()].flatMap((p) => (p ?? []).map(refKey)));
    const relevantA = blocked ? [] : d.assignments.filter((a) => onPaths.has(refKey(a.scope)));
    const relevantG = blocked ? [] : d.groups.filter((g) => onPaths.has(refKey(g.scope)));
    const grantRoleIds = blocked || !onPaths.size ? [] : (d.grant?.roleIds ?? []);
    const { roles, groupRoles } = await readRoles(tid, relevantA, relevantG, grantRoleIds);
    const userEndAt = ms(d.user?.endDate);
    const provisional = d.stampsTouchedAt > started - settleMs;
    const out = new Map<string, Entry>();
    for (const t of targets) {
      const path = paths.get(refKey(t));
      const grants = blocked || !path ? [] : grantsFor(d, tid, path, roles, groupRoles);
      let validUntil = Infinity;
      const boundary = (b?: number) => {
        if (b !== undefined && b > started && b < validUntil) validUntil = b;
      };
      for (const g of grants) {
        boundary(g.startAt);
        boundary(g.endAt);
      }
      if (userEndAt !== undefined) boundary(userEndAt + 1);
      out.set(refKey(t), {
        stamps: d.stamps,
        resolvedAt: started,
        validatedAt: started,
        provisional,
        validUntil,
        blocked: blocked ?? (path ? undefined : 'scope-not-in-tenant'),
        userEndAt,
        grants,
      });
    }
    return out;
  }

  interface Verdict {
    allowed: boolean;
    reason: Reason;
    by?: { grant: Grant; rule: CompiledRule };
  }

  const active = (g: Grant, at: number) => (g.startAt === undefined || at >= g.startAt) && (g.endAt === undefined || at < g.endAt);

  function evaluate(e: Entry, permission: string, at: number): Verdict {
    if (e.blocked) return { allowed: false, reason: e.blocked };
    if (e.userEndAt !== undefined && at > e.userEndAt) return { allowed: false, reason: 'user-disabled' };
    let allow: Verdict['by'];
    let deny: Verdict['by'];
    let outside: Verdict['by'];
    for (const g of e.grants) {
      let a: CompiledRule | undefined;
      let dn: CompiledRule | undefined;
      for (const r of g.rules) {
        if (!ruleMatches(r.key, permission)) continue;
        if (r.effect === 'DENY') dn ??= r;
        else a ??= r;
      }
      if (!a && !dn) continue;
      if (!active(g, at)) {
        outside ??= { grant: g, rule: (dn ?? a)! };
        continue;
      }
      if (dn && !deny) deny = { grant: g, rule: dn };
      if (a && !allow) allow = { grant: g, rule: a };
    }
    if (deny) return { allowed: false, reason: 'denied-by-rule', by: deny };
    if (allow) return { allowed: true, reason: 'allowed', by: allow };
    return outside ? { allowed: false, reason: 'outside-window', by: outside } : { allowed: false, reason: 'no-grant' };
  }

  function validateIds(tid: string, uid: string) {
    checkId('tenantId', tid);
    checkId('userId', uid);
  }

  function validatePermission(field: string, p: unknown): string {
    if (typeof p !== 'string' || !isPermissionKey(p)) throw validation(field, 'A permission key: module:action[:resource] or page:<name> (no wildcards)');
    return p;
  }

  /** The cached entry of (tenant, user, scope) if it is still inside its windows' boundary at `t0`. */
  function cachedEntry(tid: string, uid: string, s: ScopeRef, t0: number): Entry | undefined {
    const e = cache.get(cacheKey(tid, uid, s));
    return e && t0 < e.validUntil ? e : undefined;
  }

  /** Bounded staleness: the entry answers with no request if it was validated at most `maxStalenessMs` ago. */
  const freshEnough = (e: Entry, t0: number, maxStalenessMs: number | undefined) => maxStalenessMs !== undefined && t0 - e.validatedAt <= maxStalenessMs;

  /**
   * Entries for the targets, from cache when allowed and still valid, else resolved cold (and
   * cached). Returns the entries and where they came from.
   */
  async function entriesFor(tid: string, uid: string, targets: ScopeRef[], maxStalenessMs?: number): Promise<{ entries: Map<string, Entry>; source: DecisionSource }> {
    const t0 = nowMs();
    const cached = new Map<string, Entry>();
    for (const t of targets) {
      const e = cachedEntry(tid, uid, t, t0);
      if (e) cached.set(refKey(t), e);
    }
    if (cached.size === targets.length) {
      const all = [...cached.values()];
      if (all.every((e) => freshEnough(e, t0, maxStalenessMs))) return { entries: cached, source: 'bounded' };
      if (all.every((e) => !e.provisional)) {
        // One BatchGetItem of the three stamps, shared with the checks that asked alongside.
        const current = await stampReader.read(tid, uid);
        if (all.every((e) => e.stamps === current)) {
          for (const e of all) e.validatedAt = t0;
          return { entries: cached, source: 'validated' };
        }
      }
    }
    const entries = await resolve(tid, uid, targets);
    for (const t of targets) cache.set(cacheKey(tid, uid, t), entries.get(refKey(t))!);
    return { entries, source: 'cold' };
  }

  const uniqueScopes = (scopes: ScopeRef[]) => [...new Map(scopes.map((s) => [refKey(s), { kind: s.kind, id: s.id }])).values()];

  const decision = (e: Entry, permission: string, s: ScopeRef, at: number, source: DecisionSource): Decision => {
    const v = evaluate(e, permission, at);
    return { allowed: v.allowed, reason: v.reason, permission, scope: { kind: s.kind, id: s.id }, source };
  };

  /** Decisions for validated input: the entries of the distinct scopes (one stamp read when cached), then each check. */
  async function decide(tid: string, uid: string, checks: { permission: string; scope: ScopeRef }[], atInput: Date | undefined, maxStalenessMs: number | undefined): Promise<Decision[]> {
    const at = atInput ? atInput.getTime() : nowMs();
    const targets = checks.length === 1 ? [{ kind: checks[0].scope.kind, id: checks[0].scope.id }] : uniqueScopes(checks.map((c) => c.scope));
    const { entries, source } = await entriesFor(tid, uid, targets, maxStalenessMs);
    return checks.map((c) => decision(entries.get(refKey(c.scope))!, c.permission, c.scope, at, source));
  }

  async function checkMany(input: CheckManyInput): Promise<Decision[]> {
    validateIds(input.tenantId, input.userId);
    if (!Array.isArray(input.checks) || input.checks.length === 0) throw validation('checks', 'At least one check');
    if (input.checks.length > MAX_CHECKS) throw validation('checks', `At most ${MAX_CHECKS} checks per call`);
    input.checks.forEach((c, i) => {
      validatePermission(`checks[${i}].permission`, c?.permission);
      checkedScopeKey(h, c.scope, `checks[${i}].scope`);
    });
    return decide(input.tenantId, input.userId, input.checks, input.at, input.maxStalenessMs);
  }

  function validateCheck(input: CheckInput) {
    validatePermission('permission', input?.permission);
    checkedScopeKey(h, input.scope);
    validateIds(input.tenantId, input.userId);
  }

  /** Bounded staleness with a fresh entry: the decision, synchronously (what entriesFor would do). */
  function boundedDecision(input: CheckInput): Decision | undefined {
    if (input.maxStalenessMs === undefined) return undefined;
    const t0 = nowMs();
    const e = cachedEntry(input.tenantId, input.userId, input.scope, t0);
    return e && freshEnough(e, t0, input.maxStalenessMs) ? decision(e, input.permission, input.scope, input.at ? input.at.getTime() : t0, 'bounded') : undefined;
  }

  async function check(input: CheckInput): Promise<Decision> {
    validateCheck(input);
    const bounded = boundedDecision(input);
    if (bounded) return bounded;
    const [d] = await decide(input.tenantId, input.userId, [{ permission: input.permission, scope: input.scope }], input.at, input.maxStalenessMs);
    return d;
  }

  /**
   * `check`'s answer when bounded staleness lets the cache give it, without a promise (callers on
   * a hot path skip the async frames); undefined when `check` has to decide. Validates alike.
   */
  function checkCached(input: CheckInput): Decision | undefined {
    validateCheck(input);
    return boundedDecision(input);
  }

  /** Always cold (never from the cache), and says which grant and rule decided. */
  async function explain(input: Omit<CheckInput, 'maxStalenessMs'>): Promise<Explanation> {
    validateIds(input.tenantId, input.userId);
    validatePermission('permission', input?.permission);
    checkedScopeKey(h, input.scope);
    const at = input.at ?? now();
    const e = (await resolve(input.tenantId, input.userId, [input.scope])).get(refKey(input.scope))!;
    const v = evaluate(e, input.permission, at.getTime());
    const g = v.by?.grant;
    return {
      allowed: v.allowed,
      reason: v.reason,
      permission: input.permission,
      scope: { kind: input.scope.kind, id: input.scope.id },
      at: at.toISOString(),
      ...(v.by && g
        ? {
            decidedBy: {
              type: g.type,
              ...(g.type === 'assignment' ? { assignmentId: g.id } : g.type === 'group' ? { groupId: g.id } : { tenantGrantId: g.id }),
              roleId: g.roleId,
              rule: { key: v.by.rule.key, effect: v.by.rule.effect, definedBy: v.by.rule.roleId },
              scope: g.scope,
              ...(g.startAt !== undefined || g.endAt !== undefined
                ? { window: { ...(g.startAt !== undefined ? { startAt: new Date(g.startAt).toISOString() } : {}), ...(g.endAt !== undefined ? { expiresAt: new Date(g.endAt).toISOString() } : {}) } }
                : {}),
            },
          }
        : {}),
      grantsConsidered: e.grants.length,
    };
  }

  /** Effective permissions at a scope: ALLOW patterns not wholly covered by a DENY, and the DENYs. */
  async function listPermissions(input: { tenantId: string; userId: string; scope: ScopeRef; at?: Date; maxStalenessMs?: number }) {
    validateIds(input.tenantId, input.userId);
    checkedScopeKey(h, input.scope);
    const at = (input.at ?? now()).getTime();
    const { entries } = await entriesFor(input.tenantId, input.userId, [input.scope], input.maxStalenessMs);
    const e = entries.get(refKey(input.scope))!;
    const base = { scope: { kind: input.scope.kind, id: input.scope.id }, at: new Date(at).toISOString() };
    if (e.blocked || (e.userEndAt !== undefined && at > e.userEndAt)) return { ...base, permissions: [] as string[], denied: [] as string[], reason: e.blocked ?? ('user-disabled' as Reason) };
    const allows = new Set<string>();
    const denies = new Set<string>();
    for (const g of e.grants) if (active(g, at)) for (const r of g.rules) (r.effect === 'DENY' ? denies : allows).add(r.key);
    const permissions = [...allows].filter((a) => ![...denies].some((d) => ruleCovers(d, a))).sort();
    return { ...base, permissions, denied: [...denies].sort(), reason: undefined as Reason | undefined };
  }

  /**
   * Scopes where the user holds a permission: the scopes of the grants that allow it and their
   * descendants (the path-sorted tree index GSI5, one paginated Query per allowed root), minus the
   * subtrees under a grant that denies it. Root decisions use strongly consistent reads; the
   * descendant listing is an index listing.
   */
  async function listScopes(input: { tenantId: string; userId: string; permission: string; at?: Date; limit?: number; cursor?: string }) {
    const { tenantId: tid, userId: uid } = input;
    validateIds(tid, uid);
    const permission = validatePermission('permission', input.permission);
    const limit = Math.min(Math.max(input.limit ?? 25, 1), 100);
    const at = (input.at ?? now()).getTime();
    const binding = CursorCodec.binding({ q: 'listScopes', tid, uid, permission, at: input.at ? at : null });
    const state = input.cursor ? (store.cursors.decode(input.cursor, binding) as { i: number; c: string | null; e: number }) : { i: 0, c: null, e: 0 };

    const d = await readUserTenant(tid, uid, []);
    if (blockedOf(d, tid) || (ms(d.user?.endDate) ?? Infinity) < at) return { items: [], cursor: null };
    // Wave 2: roles and group roles, and the nodes of the grants' scopes (for their paths).
    const scopeRefs = [...new Map([...d.assignments.map((a) => a.scope), ...d.groups.map((g) => g.scope)].filter((s) => s.kind !== h.tenantKind).map((s) => [refKey(s), s])).values()];
    const [{ roles, groupRoles }, nodes] = await Promise.all([
      readRoles(tid, d.assignments, d.groups, d.grant?.roleIds ?? []),
      store.batchGet<ScopeNodeRecord>(scopeRefs.map((s) => scopeItemKey(h, s)).filter((k): k is Key => !!k)),
    ]);
    const nodeOf = new Map(nodes.filter((n) => n.tenantId === tid).map((n) => [refKey({ kind: n.kind, id: n.id }), n]));
    const placed = (s: ScopeRef): { ref: ScopeRef; path: string; name?: string } | undefined => {
      if (s.kind === h.tenantKind) return s.id === tid ? { ref: s, path: treePathOf(h, [s]), name: d.tenant?.name } : undefined;
      const n = nodeOf.get(refKey(s));
      return n && n.kind === s.kind ? { ref: s, path: treePathOf(h, [...n.path, s]), name: n.name } : undefined;
    };
    const allowRoots: { ref: ScopeRef; path: string; name?: string }[] = [];
    const denyPaths: string[] = [];
    const consider = (scope: ScopeRef, roleId: string, win: { startAt?: number; endAt?: number }) => {
      if ((win.startAt !== undefined && at < win.startAt) || (win.endAt !== undefined && at >= win.endAt)) return;
      const rules = (roles.get(roleId)?.effectivePermissions ?? []).filter((r) => ruleMatches(r.key, permission));
      if (!rules.length) return;
      const p = placed(scope);
      if (!p) return;
      if (rules.some((r) => r.effect === 'DENY')) denyPaths.push(p.path);
      else allowRoots.push(p);
    };
    for (const a of d.assignments) consider(a.scope, a.roleId, { startAt: ms(a.startAt), endAt: ms(a.endAt) });
    for (const g of d.groups) for (const rid of groupRoles.get(g.groupId) ?? []) consider(g.scope, rid, {});
    for (const rid of d.grant?.roleIds ?? []) consider(tenantRef(tid), rid, {});
    const under = (path: string, root: string) => path === root || path.startsWith(`${root}/`);
    const denied = (path: string) => denyPaths.some((dp) => under(path, dp));
    const roots = [...new Map(allowRoots.map((r) => [r.path, r])).values()]
      .filter((r) => !denied(r.path))
      .filter((r, _, all) => !all.some((o) => o.path !== r.path && under(r.path, o.path)))
      .sort((a, b) => (a.path < b.path ? -1 : 1));

    const items: { kind: string; id: string; name?: string }[] = [];
    const tree = keys.tree(h.T, tid);
    let { i, c, e } = state;
    while (i < roots.length && items.length < limit) {
      const root = roots[i];
      if (!e) {
        items.push({ kind: root.ref.kind, id: root.ref.id, ...(root.name ? { name: root.name } : {}) });
        e = 1;
        continue;
      }
      const page = await store.query<ScopeNodeRecord & Item>({ index: tree.index, pk: tree.pk, sk: { beginsWith: keys.descendantsOf(root.path) }, limit: limit - items.length, cursor: c ?? undefined });
      for (const n of page.items) if (!denied(String(n.GSI5SK))) items.push({ kind: n.kind, id: n.id, name: n.name });
      if (page.cursor) c = page.cursor;
      else {
        i++;
        c = null;
        e = 0;
      }
    }
    return { items, cursor: i < roots.length ? store.cursors.encode({ i, c, e }, binding) : null };
  }

  /** 002 `canUserAccessPage(userId, locationId, page)`: a check of `page:<page>` at that scope. */
  async function canUserAccessPage(tenantId: string, userId: string, location: string | ScopeRef, page: string, o: { at?: Date; maxStalenessMs?: number } = {}): Promise<boolean> {
    let scope: ScopeRef;
    if (typeof location === 'string') {
      const kinds = Object.keys(h.kinds);
      if (kinds.length !== 1) throw validation('scope', `This hierarchy has several scope kinds (${kinds.join(', ')}); pass {kind, id}`);
      scope = { kind: kinds[0], id: location };
    } else scope = location;
    return (await check({ tenantId, userId, permission: pageKey(page), scope, ...o })).allowed;
  }

  return {
    check,
    checkCached,
    checkMany,
    explain,
    listPermissions,
    listScopes,
    canUserAccessPage,
    cache: {
      clear: () => cache.clear(),
      get size() {
        return cache.size;
      },
    },
  };
}
