/**
 * Property tests: random scope trees, roles with parents and DENYs, groups, tenant grants,
 * assignments with windows, and random sequences of grants, revocations and role changes. After
 * every step, every check — from a warm engine (its cache validated by stamps), from a cold engine,
 * through check, checkMany and explain, at several instants — equals the brute-force reference
 * evaluator (reference.test-util.ts), and listScopes equals the reference's allowed set.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { GatehouseError } from '../errors.ts';
import type { Store } from '../store/store.ts';
import type { ScopeRef } from '../tenancy/model.ts';
import { accessOn, ctx, facilities, fixtures, storeOf } from './fixtures.test-util.ts';
import type { Access } from './index.ts';
import type { Rule } from './model.ts';
import { referenceDecide, referenceSnapshot } from './reference.test-util.ts';

const h = facilities();
const KEYS = ['a:read', 'a:write', 'b:read', 'b:x:y', 'page:home', 'c:zz'];
const PATTERNS = ['*', 'a:*', 'b:*', 'b:x:*'];
const HOUR = 3600_000;

let t: TestTable;
let store: Store;
let warm: Access;
let cold: Access;
let f: ReturnType<typeof fixtures>;
let foreign: ScopeRef;
let comparisons = 0;

beforeAll(async () => {
  t = await createTestTable();
  store = storeOf(t);
  f = fixtures(store, h);
  warm = await accessOn(store, h, { cache: { settleMs: 0 } });
  cold = await accessOn(store, h);
  await warm.permissions.ensure(ctx, KEYS.map((key) => ({ key })));
  const other = await f.tenant();
  foreign = await f.node(other, 'project');
}, 60_000);
afterAll(async () => {
  console.info(`access property tests: ${comparisons} decisions compared with the reference`);
  await t?.drop();
});

const nat = (max: number) => fc.nat({ max });
const ruleArb = fc.uniqueArray(fc.record({ key: fc.constantFrom(...KEYS, ...PATTERNS), effect: fc.constantFrom<Rule['effect']>('ALLOW', 'ALLOW', 'ALLOW', 'DENY') }), { selector: (r) => r.key, minLength: 1, maxLength: 4 });
const assignmentArb = fc.record({ user: nat(9), role: nat(9), scope: nat(19), start: fc.option(fc.integer({ min: -48, max: 48 }), { nil: undefined, freq: 2 }), len: fc.option(fc.integer({ min: 1, max: 72 }), { nil: undefined, freq: 2 }) });
const opArb = fc.oneof(
  fc.record({ op: fc.constant('revoke' as const), i: nat(19) }),
  fc.record({ op: fc.constant('assign' as const), a: assignmentArb }),
  fc.record({ op: fc.constant('leave' as const), group: nat(9), user: nat(9) }),
  fc.record({ op: fc.constant('join' as const), group: nat(9), user: nat(9) }),
  fc.record({ op: fc.constant('groupRoleOff' as const), group: nat(9), role: nat(9) }),
  fc.record({ op: fc.constant('groupRoleOn' as const), group: nat(9), role: nat(9) }),
  fc.record({ op: fc.constant('rules' as const), role: nat(9), rules: ruleArb }),
  fc.record({ op: fc.constant('reparent' as const), role: nat(9), parent: fc.option(nat(9), { nil: undefined }) }),
  fc.record({ op: fc.constant('userStatus' as const), user: nat(9), status: fc.constantFrom('active' as const, 'disabled' as const) }),
  fc.record({ op: fc.constant('tenantStatus' as const), status: fc.constantFrom('active' as const, 'suspended' as const) }),
  fc.record({ op: fc.constant('deleteRole' as const), role: nat(9) }),
);
const worldArb = fc.record({
  tree: fc.array(fc.tuple(nat(20), fc.boolean()), { minLength: 2, maxLength: 8 }),
  roles: fc.array(fc.record({ parent: fc.option(nat(9), { nil: undefined }), rules: ruleArb }), { minLength: 3, maxLength: 5 }),
  users: fc.array(fc.record({ status: fc.constantFrom('active' as const, 'active' as const, 'active' as const, 'disabled' as const), endH: fc.option(fc.integer({ min: -24, max: 48 }), { nil: undefined }) }), { minLength: 2, maxLength: 3 }),
  groups: fc.array(fc.record({ scope: nat(19), roles: fc.uniqueArray(nat(9), { maxLength: 3 }), members: fc.uniqueArray(nat(9), { maxLength: 3 }) }), { maxLength: 3 }),
  assignments: fc.array(assignmentArb, { minLength: 1, maxLength: 8 }),
  grant: fc.option(fc.record({ user: nat(9), roles: fc.uniqueArray(nat(9), { minLength: 1, maxLength: 2 }) }), { nil: undefined }),
  ops: fc.array(opArb, { minLength: 1, maxLength: 4 }),
  instants: fc.uniqueArray(fc.integer({ min: -60, max: 100 }), { minLength: 3, maxLength: 3 }),
});

/** Expected refusals of random operations (cycles, duplicates, deleted things) leave no trace. */
async function tolerate(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof GatehouseError) || !['VALIDATION', 'NOT_FOUND', 'CONFLICT'].includes(e.code)) throw e;
  }
}

it('every check equals the brute-force reference, through grants, revocations and role changes', async () => {
  await fc.assert(
    fc.asyncProperty(worldArb, async (w) => {
      const T0 = Math.floor(Date.now() / HOUR) * HOUR;
      const tid = await f.tenant();
      const tenantScope = f.tenantScope(tid);
      // Scope tree: each node under an earlier one (or the tenant), of a kind its parent allows.
      const scopes: ScopeRef[] = [tenantScope];
      for (const [p, alt] of w.tree) {
        const parent = scopes[p % scopes.length];
        const kind = parent.kind === h.tenantKind ? 'project' : parent.kind === 'project' ? 'building' : parent.kind === 'building' ? (alt ? 'zone' : 'device') : 'project';
        scopes.push(await f.node(tid, kind, kind === 'project' ? undefined : parent));
      }
      const roleIds: string[] = [];
      for (const [i, r] of w.roles.entries()) {
        // Mostly chains (parent = the previous role), so inheritance 3+ deep is common.
        const parent = r.parent !== undefined && i > 0 ? roleIds[r.parent % 3 === 0 ? r.parent % i : i - 1] : undefined;
        roleIds.push((await warm.roles.create(ctx, tid, { name: `r${i}`, parentRoleId: parent, permissions: r.rules })).id);
      }
      const users: string[] = [];
      for (const u of w.users) users.push(await f.user(tid, { status: u.status, endDate: u.endH !== undefined ? new Date(T0 + u.endH * HOUR).toISOString() : undefined }));
      const groupIds: string[] = [];
      for (const g of w.groups) {
        const grp = await warm.groups.create(ctx, tid, { name: 'g', scope: scopes[g.scope % scopes.length], roleIds: g.roles.map((r) => roleIds[r % roleIds.length]).filter((r, i, a) => a.indexOf(r) === i) });
        groupIds.push(grp.id);
        for (const m of g.members) await tolerate(warm.groups.addMember(ctx, tid, grp.id, users[m % users.length]));
      }
      const assignmentIds: string[] = [];
      const assign = async (a: (typeof w.assignments)[number]) => {
        const startAt = a.start !== undefined ? new Date(T0 + a.start * HOUR).toISOString() : undefined;
        const expiresAt = a.len !== undefined ? new Date(T0 + ((a.start ?? 0) + a.len) * HOUR).toISOString() : undefined;
        try {
          const r = await warm.assignments.create(ctx, tid, { userId: users[a.user % users.length], roleId: roleIds[a.role % roleIds.length], scope: scopes[a.scope % scopes.length], startAt, expiresAt });
          assignmentIds.push(r.id);
        } catch (e) {
          if (!(e instanceof GatehouseError && (e.code === 'CONFLICT' || e.code === 'NOT_FOUND'))) throw e;
        }
      };
      for (const a of w.assignments) await assign(a);
      if (w.grant) await f.grant(users[w.grant.user % users.length], tid, w.grant.roles.map((r) => roleIds[r % roleIds.length]));

      const candidates = [...scopes, foreign];
      const checks = candidates.flatMap((scope) => KEYS.map((permission) => ({ permission, scope })));

      const verify = async () => {
        for (const userId of users) {
          const snap = await referenceSnapshot(store, h, tid, userId, candidates);
          for (const [n, offset] of w.instants.entries()) {
            const at = new Date(T0 + offset * HOUR);
            const expected = checks.map((c) => referenceDecide(snap, h, tid, c.permission, c.scope, at.getTime()));
            const fromWarm = await warm.engine.checkMany({ tenantId: tid, userId, checks, at });
            expect(fromWarm.map((d) => ({ allowed: d.allowed, reason: d.reason }))).toEqual(expected);
            comparisons += checks.length;
            if (n === 0) {
              cold.engine.cache.clear();
              const fromCold = await cold.engine.checkMany({ tenantId: tid, userId, checks, at });
              expect(fromCold.map((d) => ({ allowed: d.allowed, reason: d.reason }))).toEqual(expected);
              comparisons += checks.length;
            }
            // A single check and an explanation of a random one agree too.
            const k = (offset * 7919 + n) % checks.length;
            const k2 = Math.abs(k);
            const one = await warm.engine.check({ tenantId: tid, userId, ...checks[k2], at });
            const why = await warm.engine.explain({ tenantId: tid, userId, ...checks[k2], at });
            expect({ allowed: one.allowed, reason: one.reason }).toEqual(expected[k2]);
            expect({ allowed: why.allowed, reason: why.reason }).toEqual(expected[k2]);
            if (why.allowed) expect(why.decidedBy?.rule.effect).toBe('ALLOW');
            comparisons += 2;
          }
          // listScopes of one permission equals the reference's allowed set over the tree.
          const permission = KEYS[users.indexOf(userId) % KEYS.length];
          const at = new Date(T0 + w.instants[0] * HOUR);
          const listed = new Set<string>();
          for (let cursor: string | undefined, i = 0; i < 20; i++) {
            const page = await warm.engine.listScopes({ tenantId: tid, userId, permission, at, limit: 4, cursor });
            for (const s of page.items) listed.add(`${s.kind}#${s.id}`);
            if (!page.cursor) break;
            cursor = page.cursor;
          }
          const allowed = new Set(scopes.filter((s) => referenceDecide(snap, h, tid, permission, s, at.getTime()).allowed).map((s) => `${s.kind}#${s.id}`));
          expect([...listed].sort()).toEqual([...allowed].sort());
          comparisons += scopes.length;
        }
      };

      await verify();
      for (const op of w.ops) {
        switch (op.op) {
          case 'revoke':
            if (assignmentIds.length) await tolerate(warm.assignments.revoke(ctx, tid, assignmentIds[op.i % assignmentIds.length]));
            break;
          case 'assign':
            await assign(op.a);
            break;
          case 'leave':
            if (groupIds.length) await tolerate(warm.groups.removeMember(ctx, tid, groupIds[op.group % groupIds.length], users[op.user % users.length]));
            break;
          case 'join':
            if (groupIds.length) await tolerate(warm.groups.addMember(ctx, tid, groupIds[op.group % groupIds.length], users[op.user % users.length]));
            break;
          case 'groupRoleOff':
            if (groupIds.length) await tolerate(warm.groups.removeRole(ctx, tid, groupIds[op.group % groupIds.length], roleIds[op.role % roleIds.length]));
            break;
          case 'groupRoleOn':
            if (groupIds.length) await tolerate(warm.groups.addRole(ctx, tid, groupIds[op.group % groupIds.length], roleIds[op.role % roleIds.length]));
            break;
          case 'rules':
            await tolerate(warm.roles.update(ctx, tid, roleIds[op.role % roleIds.length], { permissions: op.rules }));
            break;
          case 'reparent':
            await tolerate(warm.roles.update(ctx, tid, roleIds[op.role % roleIds.length], { parentRoleId: op.parent === undefined ? null : roleIds[op.parent % roleIds.length] }));
            break;
          case 'userStatus':
            await f.userStatus(users[op.user % users.length], op.status);
            break;
          case 'tenantStatus':
            await f.tenantStatus(tid, op.status);
            break;
          case 'deleteRole':
            await tolerate(warm.roles.remove(ctx, tid, roleIds[op.role % roleIds.length], { cascade: true }));
            break;
        }
        await verify();
      }
    }),
    { numRuns: Number(process.env.ACCESS_PROPERTY_RUNS ?? 12), endOnFailure: true },
  );
}, 180_000);
