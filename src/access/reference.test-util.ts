/**
 * A brute-force reference evaluator, written separately from the engine: it reads the same data
 * naively (whole partitions, every role's PERMISSION# items, parents walked one role at a time, no
 * compiled rules, no cache) and evaluates the rules directly. The property tests compare the
 * engine with it.
 */
import { keys } from '../store/keys.ts';
import type { Item, Store } from '../store/store.ts';
import type { Hierarchy, ScopeRef } from '../tenancy/model.ts';

type Effect = 'ALLOW' | 'DENY';

export interface RefGrant {
  scope: ScopeRef;
  roleId: string;
  startAt?: number;
  endAt?: number;
}

/** Everything the reference knows about one (tenant, user), read naively. */
export interface RefSnapshot {
  tenant?: Item;
  user?: Item;
  member: boolean;
  grants: RefGrant[];
  /** roleId → every rule of the role and its ancestors (read from PERMISSION# items). */
  rules: Map<string, { key: string; effect: Effect }[]>;
  /** scope kind#id → its item (node or tenant). */
  scopes: Map<string, Item | undefined>;
}

const sk = (s: ScopeRef) => `${s.kind}#${s.id}`;

function matches(pattern: string, permission: string) {
  // Wildcards as a regular expression: `*` alone is everything, `x:*` is the prefix `x:`.
  const re = pattern === '*' ? /^.*$/ : new RegExp(`^${pattern.split(':').map((s) => (s === '*' ? '.+' : s.replace(/[.]/g, '\\.'))).join(':')}$`);
  return re.test(permission);
}

export async function referenceSnapshot(store: Store, h: Hierarchy, tenantId: string, userId: string, scopes: ScopeRef[]): Promise<RefSnapshot> {
  const tenant = await store.get<Item>(keys.tenant(h.T, tenantId));
  const userPartition = await store.queryAll<Item>({ pk: keys.user(userId).PK });
  const user = userPartition.find((i) => i.SK === 'METADATA');
  const member = !!user && (user.tenantId === tenantId || userPartition.some((i) => i.SK === `${h.T}#${tenantId}`));
  const tenantGrant = userPartition.find((i) => i.SK === `${h.T}#${tenantId}`);
  const grants: RefGrant[] = [];
  for (const i of userPartition) {
    if (i.Type === 'Assignment' && i.tenantId === tenantId) {
      grants.push({ scope: i.scope as ScopeRef, roleId: String(i.roleId), startAt: i.startAt ? Date.parse(String(i.startAt)) : undefined, endAt: i.endAt ? Date.parse(String(i.endAt)) : undefined });
    }
    if (i.Type === 'GroupMember' && i.tenantId === tenantId) {
      const groupItems = await store.queryAll<Item>({ pk: keys.group(String(i.groupId)).PK });
      const meta = groupItems.find((g) => g.SK === 'METADATA');
      if (!meta) continue;
      for (const e of groupItems) if (e.Type === 'GroupRole') grants.push({ scope: meta.scope as ScopeRef, roleId: String(e.roleId) });
    }
  }
  for (const r of (tenantGrant?.roleIds as string[] | undefined) ?? []) grants.push({ scope: { kind: h.tenantKind, id: tenantId }, roleId: r });

  const rules = new Map<string, { key: string; effect: Effect }[]>();
  async function rulesOf(roleId: string, seen: Set<string>): Promise<{ key: string; effect: Effect }[]> {
    if (seen.has(roleId)) return [];
    seen.add(roleId);
    const items = await store.queryAll<Item>({ pk: keys.role(roleId).PK });
    const meta = items.find((i) => i.SK === 'METADATA');
    if (!meta || (meta.scope === 'tenant' && meta.tenantId !== tenantId)) return [];
    const own = items.filter((i) => String(i.SK).startsWith('PERMISSION#')).map((i) => ({ key: String(i.key), effect: i.effect as Effect }));
    return meta.parentRoleId ? [...own, ...(await rulesOf(String(meta.parentRoleId), seen))] : own;
  }
  for (const g of grants) if (!rules.has(g.roleId)) rules.set(g.roleId, await rulesOf(g.roleId, new Set()));

  const scopeItems = new Map<string, Item | undefined>();
  for (const s of scopes) {
    if (s.kind === h.tenantKind) scopeItems.set(sk(s), s.id === tenantId ? tenant : undefined);
    else scopeItems.set(sk(s), await store.get<Item>(keys.scopeNode(h.kinds[s.kind].prefix, s.id)));
  }
  return { tenant, user, member, grants, rules, scopes: scopeItems };
}

/** The reference decision: same reasons, evaluated the obvious way. */
export function referenceDecide(snap: RefSnapshot, h: Hierarchy, tenantId: string, permission: string, scope: ScopeRef, at: number): { allowed: boolean; reason: string } {
  if (!snap.tenant) return { allowed: false, reason: 'tenant-not-found' };
  if (snap.tenant.status !== 'active') return { allowed: false, reason: 'tenant-suspended' };
  if (!snap.user) return { allowed: false, reason: 'user-not-found' };
  if (snap.user.status !== 'active') return { allowed: false, reason: 'user-disabled' };
  if (!snap.member) return { allowed: false, reason: 'not-a-member' };
  const item = snap.scopes.get(sk(scope));
  let path: ScopeRef[];
  if (scope.kind === h.tenantKind) {
    if (scope.id !== tenantId || !item) return { allowed: false, reason: 'scope-not-in-tenant' };
    path = [scope];
  } else {
    if (!item || item.tenantId !== tenantId || item.kind !== scope.kind) return { allowed: false, reason: 'scope-not-in-tenant' };
    path = [...(item.path as ScopeRef[]), scope];
  }
  if (snap.user.endDate && Date.parse(String(snap.user.endDate)) < at) return { allowed: false, reason: 'user-disabled' };
  const onPath = new Set(path.map(sk));
  let allow = false;
  let deny = false;
  let outside = false;
  for (const g of snap.grants) {
    if (!onPath.has(sk(g.scope))) continue;
    const hits = (snap.rules.get(g.roleId) ?? []).filter((r) => matches(r.key, permission));
    if (!hits.length) continue;
    const inWindow = (g.startAt === undefined || g.startAt <= at) && (g.endAt === undefined || at < g.endAt);
    if (!inWindow) {
      outside = true;
      continue;
    }
    if (hits.some((r) => r.effect === 'DENY')) deny = true;
    if (hits.some((r) => r.effect === 'ALLOW')) allow = true;
  }
  if (deny) return { allowed: false, reason: 'denied-by-rule' };
  if (allow) return { allowed: true, reason: 'allowed' };
  return { allowed: false, reason: outside ? 'outside-window' : 'no-grant' };
}

/** Scopes (kind#id) where the reference allows the permission, among the given candidates. */
export function referenceScopes(snap: RefSnapshot, h: Hierarchy, tenantId: string, permission: string, candidates: ScopeRef[], at: number): Set<string> {
  return new Set(candidates.filter((s) => referenceDecide(snap, h, tenantId, permission, s, at).allowed).map(sk));
}
