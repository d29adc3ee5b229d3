/**
 * Issue 4 budgets, asserted through request accounting on a tenant with 20 groups × 5 roles each
 * and role parents 3 deep: cold ≤ 3 waves (≤ 2 without groups), repeated strongly consistent = 1
 * wave, bounded staleness = 0 requests, checkMany of 100 permissions = the waves of one check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { measure } from '../store/accounting.ts';
import type { ScopeRef } from '../tenancy/model.ts';
import { accessOn, ctx, facilities, fixtures, sleep, storeOf } from './fixtures.test-util.ts';
import type { Access } from './index.ts';

const h = facilities();
let t: TestTable;
let access: Access;
let tid: string;
let groupUser: string;
let plainUser: string;
let project: ScopeRef;
let building: ScopeRef;
let device: ScopeRef;
const PERMS = Array.from({ length: 100 }, (_, i) => `mod${i % 10}:act${Math.floor(i / 10)}`);

beforeAll(async () => {
  t = await createTestTable();
  const store = storeOf(t);
  const f = fixtures(store, h);
  access = await accessOn(store, h);
  await access.bootstrap(ctx);
  await access.permissions.ensure(ctx, PERMS.map((key) => ({ key })));
  tid = await f.tenant();
  project = await f.node(tid, 'project');
  building = await f.node(tid, 'building', project);
  device = await f.node(tid, 'device', building);
  const path: ScopeRef[] = [f.tenantScope(tid), project, building];
  groupUser = await f.user(tid);
  plainUser = await f.user(tid);

  // 100 roles in chains of three (root ← mid ← leaf): the leaf inherits from two ancestors.
  const roleIds: string[] = [];
  for (let c = 0; c < 34; c++) {
    let parent: string | undefined;
    for (let d = 0; d < 3 && roleIds.length < 100; d++) {
      const key = PERMS[(c * 3 + d) % PERMS.length];
      const r = await access.roles.create(ctx, tid, { name: `r-${c}-${d}`, parentRoleId: parent, permissions: [{ key, effect: 'ALLOW' }] });
      roleIds.push(r.id);
      parent = r.id;
    }
  }
  // 20 groups × 5 roles, scoped along the device's path; the user is in all of them.
  for (let g = 0; g < 20; g++) {
    const grp = await access.groups.create(ctx, tid, { name: `g${g}`, scope: path[g % 3], roleIds: roleIds.slice(g * 5, g * 5 + 5) });
    await access.groups.addMember(ctx, tid, grp.id, groupUser);
  }
  for (const u of [groupUser, plainUser]) {
    await access.assignments.create(ctx, tid, { userId: u, roleId: roleIds[2], scope: building });
    await access.assignments.create(ctx, tid, { userId: u, roleId: 'tenant-auditor', scope: project });
  }
  // Stamps moved during setup: let them settle so the first resolution is cacheable.
  await sleep(1100);
}, 120_000);
afterAll(() => t?.drop());

const check = (userId: string, permission: string, scope: ScopeRef, extra: { maxStalenessMs?: number } = {}) =>
  measure('check', () => access.engine.check({ tenantId: tid, userId, permission, scope, ...extra }));

describe('decision budgets (request accounting)', () => {
  it('a cold check costs at most 3 waves with 20 groups × 5 roles, whatever it reads', async () => {
    access.engine.cache.clear();
    const { result, log } = await check(groupUser, 'mod9:act9', device);
    expect(result).toMatchObject({ allowed: true, source: 'cold' });
    expect(log.waves).toBeLessThanOrEqual(3);
    // wave 1: BatchGet + 2 Queries; wave 2: BatchGet + 20 group Queries; wave 3: BatchGet.
    expect(log.byCommand()).toEqual({ BatchGetItem: 3, Query: 22 });
    expect(log.requests.every((r) => !r.index)).toBe(true);
  });

  it('a cold check without groups costs at most 2 waves', async () => {
    access.engine.cache.clear();
    const { result, log } = await check(plainUser, PERMS[0], device); // inherited from the chain's root
    expect(result.allowed).toBe(true);
    expect(log.waves).toBeLessThanOrEqual(2);
    expect(log.byCommand()).toEqual({ BatchGetItem: 2, Query: 2 });
  });

  it('a repeated strongly consistent check costs 1 wave (one BatchGet of the stamps)', async () => {
    access.engine.cache.clear();
    await check(groupUser, 'mod9:act9', device);
    const { result, log } = await check(groupUser, 'mod9:act9', device);
    expect(result).toMatchObject({ allowed: true, source: 'validated' });
    expect(log.waves).toBe(1);
    expect(log.byCommand()).toEqual({ BatchGetItem: 1 });
    // Another permission at the same scope is answered from the same resolved grant set.
    const other = await check(groupUser, 'gatehouse:roles:read', device);
    expect(other.result).toMatchObject({ allowed: true, source: 'validated' });
    expect(other.log.waves).toBe(1);
  });

  it('a bounded-staleness check costs 0 requests', async () => {
    await check(groupUser, 'mod9:act9', device);
    const { result, log } = await check(groupUser, 'mod1:act1', device, { maxStalenessMs: 60_000 });
    expect(result.source).toBe('bounded');
    expect(log.count).toBe(0);
  });

  it('checkMany of 100 permissions costs the waves of one check, cold and warm', async () => {
    access.engine.cache.clear();
    const one = await check(groupUser, PERMS[0], device);
    access.engine.cache.clear();
    const many = await measure('many', () => access.engine.checkMany({ tenantId: tid, userId: groupUser, checks: PERMS.map((permission) => ({ permission, scope: device })) }));
    expect(many.result).toHaveLength(100);
    expect(many.log.waves).toBe(one.log.waves);
    expect(many.log.count).toBe(one.log.count);
    const warm = await measure('many', () => access.engine.checkMany({ tenantId: tid, userId: groupUser, checks: PERMS.map((permission) => ({ permission, scope: device })) }));
    expect(warm.log.waves).toBe(1);
    expect(warm.result.map((r) => r.allowed)).toEqual(many.result.map((r) => r.allowed));
  });

  it('checkMany over several scopes reads all their nodes in wave 1', async () => {
    access.engine.cache.clear();
    const checks = [device, building, project, { kind: h.tenantKind, id: tid }].flatMap((scope) => PERMS.slice(0, 25).map((permission) => ({ permission, scope })));
    const { result, log } = await measure('many', () => access.engine.checkMany({ tenantId: tid, userId: groupUser, checks }));
    expect(result).toHaveLength(100);
    expect(log.waves).toBeLessThanOrEqual(3);
    expect(log.byCommand().BatchGetItem).toBe(3);
  });
});
