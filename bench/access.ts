/**
 * The decision engine at scale: a tenant of 10k users, 1k scopes, 200 roles (parent chains) and
 * 500 groups, bulk-loaded with BatchWriteItem (the same item builders the services use). Figures:
 * check.cold.{waves,requests,rcu}, check.warm.waves, check.bounded.requests, checkMany100.waves,
 * check.{cold,warm,bounded}.{p50_ms,p99_ms,ops_per_s}, raw.get.ops_per_s (GetItem ceiling at the
 * same concurrency), raw.stamps3.ops_per_s (a BatchGetItem of one check's three stamps per op: the
 * ceiling of warm checks that each read their own stamps), check.warm_vs_raw_get (goal ≥ 0.9),
 * check.warm.unshared.ops_per_s (warm checks on an engine that does not share stamp reads —
 * `cache.stampReadsInFlight: 0` — each sends its own BatchGetItem),
 * naive002.{requests,p50_ms} (source 002's canUserAccessPage flow: Query the user's groups, Query
 * each group's roles, GetItem each role's page rule). Warm checks share stamp reads between
 * concurrent checks (src/access/stamps.ts createStampReader).
 */
import { ulid } from 'ulid';
import { assignmentItem } from '../src/access/assignments.ts';
import { groupItems } from '../src/access/groups.ts';
import { createAccess } from '../src/access/index.ts';
import { compileRole, type RoleRecord, type Rule } from '../src/access/model.ts';
import { roleItemBuilders } from '../src/access/roles.ts';
import { treePathOf } from '../src/access/scopes.ts';
import { measure } from '../src/store/accounting.ts';
import { keys } from '../src/store/keys.ts';
import type { Item, Store } from '../src/store/store.ts';
import { loadHierarchy } from '../src/tenancy/hierarchy.ts';
import type { Hierarchy, ScopeRef } from '../src/tenancy/model.ts';
import { percentile, round, throughput } from './stats.ts';

export interface AccessBenchOptions {
  store: Store;
  hierarchy?: Hierarchy;
  users?: number;
  /** Approximate: projects × 10 buildings × 9 devices. */
  scopes?: number;
  roles?: number;
  groups?: number;
  /** Checks timed per figure. */
  samples?: number;
  concurrency?: number;
  /** Milliseconds per throughput run. */
  throughputMs?: number;
  log?: (s: string) => void;
}

/** Deterministic pseudo-random numbers, so runs are comparable. */
function rng(seed: number) {
  let s = seed >>> 0;
  return (n: number) => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s % n;
  };
}

export async function benchAccess(o: AccessBenchOptions): Promise<Record<string, number>> {
  const { store } = o;
  const h = o.hierarchy ?? loadHierarchy('facilities');
  const log = o.log ?? (() => undefined);
  const nUsers = o.users ?? 10_000;
  const nScopes = o.scopes ?? 1_000;
  const nRoles = o.roles ?? 200;
  const nGroups = o.groups ?? 500;
  const samples = o.samples ?? 200;
  const concurrency = o.concurrency ?? 16;
  const tpMs = o.throughputMs ?? 3000;
  const rand = rng(42);
  const pick = <T>(a: T[]) => a[rand(a.length)];
  const out: Record<string, number> = {};

  // ---- bulk load -----------------------------------------------------------------------------------
  const items: Item[] = [];
  const put = (i: Item) => items.push(store.stamp(i));
  const tid = ulid();
  const tenant: ScopeRef = { kind: h.tenantKind, id: tid };
  put({ ...keys.tenant(h.T, tid), ...keys.tenantIndex(h.T, tid), Type: 'Tenant', id: tid, name: `bench ${tid}`, status: 'active', attributes: {} });

  // Scope tree (facilities): projects → 10 buildings → 9 devices each (≈ 100 scopes per project).
  const node = (kind: string, parentPath: ScopeRef[]): ScopeRef => {
    const id = ulid();
    const self = { kind, id };
    const KIND = h.kinds[kind].prefix;
    const par = parentPath[parentPath.length - 1];
    const createdAt = new Date().toISOString();
    const rec = { id, tenantId: tid, kind, name: `${kind} ${id.slice(-5)}`, parentKind: par.kind, parentId: par.id, path: parentPath, attributes: {} };
    put({ ...keys.scopeNode(KIND, id), ...keys.scopeNodeIndex(h.T, tid, KIND, id, createdAt, treePathOf(h, [...parentPath, self])), Type: 'ScopeNode', ...rec });
    put({ ...keys.childEdge(par.kind === h.tenantKind ? h.T : h.kinds[par.kind].prefix, par.id, KIND, id), Type: 'ScopeChild', ...rec });
    return self;
  };
  const projects: ScopeRef[] = [];
  const buildings: { ref: ScopeRef; path: ScopeRef[] }[] = [];
  const devices: { ref: ScopeRef; path: ScopeRef[] }[] = [];
  for (let p = 0; p < Math.max(1, Math.round(nScopes / 101)); p++) {
    const pr = node('project', [tenant]);
    projects.push(pr);
    for (let b = 0; b < 10; b++) {
      const bPath = [tenant, pr];
      const bl = node('building', bPath);
      buildings.push({ ref: bl, path: bPath });
      for (let d = 0; d < 9; d++) {
        const dPath = [tenant, pr, bl];
        devices.push({ ref: node('device', dPath), path: dPath });
      }
    }
  }

  // Permission catalog: 100 keys in 10 modules and 20 pages.
  const perms = Array.from({ length: 100 }, (_, i) => `mod${i % 10}:act${Math.floor(i / 10)}`);
  const pages = Array.from({ length: 20 }, (_, i) => `page:p${i}`);
  for (const key of [...perms, ...pages]) {
    const [module, action] = key.split(':');
    put({ ...keys.permission(key), Type: 'Permission', key, module, action, isPage: module === 'page', isDangerous: false });
  }

  // Roles: chains of three (root ← mid ← leaf); rules mix keys, pages, a wildcard, an occasional DENY.
  const rb = roleItemBuilders(h);
  const roles: RoleRecord[] = [];
  for (let i = 0; i < nRoles; i++) {
    const parent = i % 3 === 0 ? undefined : roles[i - 1];
    const rules: Rule[] = [];
    const seen = new Set<string>();
    const add = (key: string, effect: Rule['effect']) => {
      if (seen.has(key)) return;
      seen.add(key);
      rules.push({ key, effect });
    };
    for (let k = 0; k < 3; k++) add(pick(perms), 'ALLOW');
    add(pick(pages), 'ALLOW');
    if (i % 7 === 0) add(`mod${rand(10)}:*`, 'ALLOW');
    if (i % 5 === 0) add(pick(perms), 'DENY');
    const id = ulid();
    const rec = { id, scope: 'tenant' as const, tenantId: tid, name: `role-${i}`, parentRoleId: parent?.id, permissions: rules, ...compileRole(id, rules, parent) };
    roles.push(rec as RoleRecord);
    put(rb.metaItem(rec));
    put(rb.guardItem(rec));
    put(rb.edgeItem(rec));
    for (const r of rules) put(rb.ruleItem(rec, r));
  }

  // Groups at projects or buildings, three roles each.
  const groups: { id: string; scope: ScopeRef }[] = [];
  for (let g = 0; g < nGroups; g++) {
    const scope = g % 2 === 0 ? pick(projects) : pick(buildings).ref;
    const id = ulid();
    groups.push({ id, scope });
    put(groupItems.group(h.T, { id, tenantId: tid, name: `group-${g}`, scope }));
    const rs = new Set<string>();
    while (rs.size < 3) rs.add(pick(roles).id);
    for (const r of rs) put(groupItems.roleEdge(tid, id, r));
  }

  // Users: two assignments (a building, a device) and two groups each.
  const users: string[] = [];
  const groupsOfUser = new Map<string, { id: string; scope: ScopeRef }[]>();
  for (let u = 0; u < nUsers; u++) {
    const id = ulid();
    users.push(id);
    put({ ...keys.user(id), ...keys.userIndex(h.T, tid, id, 'active', '9999-12-31'), Type: 'User', id, tenantId: tid, email: `${id.toLowerCase()}@bench.test`, status: 'active' });
    put(assignmentItem(h, { tenantId: tid, userId: id, roleId: pick(roles).id, scope: pick(buildings).ref }));
    put(assignmentItem(h, { tenantId: tid, userId: id, roleId: pick(roles).id, scope: pick(devices).ref }));
    const g1 = pick(groups);
    let g2 = pick(groups);
    while (g2.id === g1.id) g2 = pick(groups);
    groupsOfUser.set(id, [g1, g2]);
    for (const g of [g1, g2]) for (const it of groupItems.members({ groupId: g.id, userId: id, tenantId: tid, scope: g.scope })) put(it);
  }

  log(`loading ${items.length} items (${nUsers} users, ${buildings.length + devices.length + projects.length} scopes, ${nRoles} roles, ${nGroups} groups)…`);
  const t0 = performance.now();
  const slice = 500;
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < items.length) {
        const part = items.slice(next, next + slice);
        next += slice;
        await store.batchWrite({ puts: part });
      }
    }),
  );
  log(`loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // ---- measurements --------------------------------------------------------------------------------
  // No write happens during the run, so no settle guard is needed; several engines = several instances.
  const access = createAccess({ store, hierarchy: h, cache: { maxEntries: 100_000 } });
  const engine = access.engine;
  // A check: a device under the scope of one of the user's groups (so its grants are on the path
  // and all three waves happen), and a permission from the catalog.
  const sample = Array.from({ length: samples }, () => {
    const userId = pick(users);
    const g = pick(groupsOfUser.get(userId)!);
    const under = devices.filter((d) => d.path.some((s) => s.id === g.scope.id));
    return { tenantId: tid, userId, permission: pick([...perms, ...pages]), scope: pick(under).ref };
  });

  // Cold: each check on a fresh cache.
  const coldWaves: number[] = [];
  const coldRequests: number[] = [];
  const coldRcu: number[] = [];
  const coldMs: number[] = [];
  let allowed = 0;
  for (const c of sample) {
    engine.cache.clear();
    const t = performance.now();
    const { result, log: l } = await measure('cold', () => engine.check(c));
    coldMs.push(performance.now() - t);
    coldWaves.push(l.waves);
    coldRequests.push(l.count);
    coldRcu.push(l.capacity);
    if (result.allowed) allowed++;
  }
  out['check.cold.waves'] = Math.max(...coldWaves);
  out['check.cold.requests'] = percentile(coldRequests, 50);
  out['check.cold.requests_max'] = Math.max(...coldRequests);
  out['check.cold.rcu'] = round(percentile(coldRcu, 50), 1);
  out['check.cold.p50_ms'] = round(percentile(coldMs, 50), 2);
  out['check.cold.p99_ms'] = round(percentile(coldMs, 99), 2);
  out['check.sample.allowed_ratio'] = round(allowed / sample.length, 2);

  // Warm: the same checks again, strongly consistent (one BatchGet of the stamps).
  const warmWaves: number[] = [];
  const warmMs: number[] = [];
  for (const c of sample) await engine.check(c);
  for (const c of sample) {
    const t = performance.now();
    const { log: l } = await measure('warm', () => engine.check(c));
    warmMs.push(performance.now() - t);
    warmWaves.push(l.waves);
  }
  out['check.warm.waves'] = Math.max(...warmWaves);
  out['check.warm.p50_ms'] = round(percentile(warmMs, 50), 2);
  out['check.warm.p99_ms'] = round(percentile(warmMs, 99), 2);

  // Bounded staleness: no request at all.
  const boundedMs: number[] = [];
  let boundedRequests = 0;
  for (const c of sample) {
    const t = performance.now();
    const { log: l } = await measure('bounded', () => engine.check({ ...c, maxStalenessMs: 600_000 }));
    boundedMs.push(performance.now() - t);
    boundedRequests = Math.max(boundedRequests, l.count);
  }
  out['check.bounded.requests'] = boundedRequests;
  out['check.bounded.p50_ms'] = round(percentile(boundedMs, 50), 4);
  out['check.bounded.p99_ms'] = round(percentile(boundedMs, 99), 4);

  // checkMany: 100 permissions at one scope, cold.
  engine.cache.clear();
  const many = await measure('many', () => engine.checkMany({ tenantId: tid, userId: sample[0].userId, checks: perms.map((permission) => ({ permission, scope: sample[0].scope })) }));
  out['checkMany100.waves'] = many.log.waves;
  out['checkMany100.requests'] = many.log.count;

  // Throughput at the same concurrency: cold (cache cleared by a fresh engine per check would be
  // unfair to the allocator; a tiny cache of 1 entry makes every check a miss), warm, bounded, raw GetItem.
  const coldEngine = createAccess({ store, hierarchy: h, cache: { maxEntries: 1 } }).engine;
  out['check.cold.ops_per_s'] = round(await throughput((i) => coldEngine.check(sample[i % sample.length]).then(() => coldEngine.cache.clear()), { concurrency, ms: tpMs }), 0);
  // Warm means warm: the checkMany figures above cleared the cache, so fill it again first.
  for (const c of sample) await engine.check(c);
  out['check.warm.ops_per_s'] = round(await throughput((i) => engine.check(sample[i % sample.length]), { concurrency, ms: tpMs }), 0);
  // The same warm checks on an engine that does not share stamp reads: each sends its own BatchGetItem.
  const unshared = createAccess({ store, hierarchy: h, cache: { maxEntries: 100_000, stampReadsInFlight: 0 } }).engine;
  for (const c of sample) await unshared.check(c);
  out['check.warm.unshared.ops_per_s'] = round(await throughput((i) => unshared.check(sample[i % sample.length]), { concurrency, ms: tpMs }), 0);
  out['check.bounded.ops_per_s'] = round(await throughput((i) => engine.check({ ...sample[i % sample.length], maxStalenessMs: 600_000 }), { concurrency, ms: tpMs }), 0);
  out['raw.get.ops_per_s'] = round(await throughput((i) => store.get(keys.user(users[i % users.length])), { concurrency, ms: tpMs }), 0);
  // What one unshared validation costs: a BatchGetItem of one check's three stamp items (user,
  // tenant shard, global shard) per operation — the ceiling of warm checks if each read its own.
  out['raw.stamps3.ops_per_s'] = round(
    await throughput((i) => store.batchGet([keys.userStamp(users[i % users.length]), keys.tenantStamp(h.T, tid, i % 8), keys.globalStamp(i % 8)]), { concurrency, ms: tpMs }),
    0,
  );
  out['check.warm_vs_raw_get'] = round(out['check.warm.ops_per_s'] / out['raw.get.ops_per_s'], 2);

  // Source 002's naive canUserAccessPage: groups of the user in the location (Query), roles of
  // each group (Query each), the page rule of each role (GetItem each); parallel within a step.
  const naiveRequests: number[] = [];
  const naiveMs: number[] = [];
  for (const c of sample.slice(0, Math.min(100, sample.length))) {
    const page = pick(pages);
    const t = performance.now();
    const { log: l } = await measure('naive', async () => {
      const gq = keys.groupsOfUser(c.userId);
      const edges = await store.queryAll<Item>({ pk: gq.pk, sk: { beginsWith: gq.skPrefix } });
      const roleLists = await Promise.all(edges.map((e) => store.queryAll<Item>({ pk: keys.groupRoles(String(e.groupId)).pk, sk: { beginsWith: 'ROLE#' } })));
      const roleIds = [...new Set(roleLists.flat().map((r) => String(r.roleId)))];
      const rules = await Promise.all(roleIds.map((r) => store.get<Item>(keys.rolePermission(r, page))));
      return rules.some((r) => r?.effect === 'ALLOW');
    });
    naiveMs.push(performance.now() - t);
    naiveRequests.push(l.count);
  }
  out['naive002.requests'] = percentile(naiveRequests, 50);
  out['naive002.p50_ms'] = round(percentile(naiveMs, 50), 2);
  return out;
}
