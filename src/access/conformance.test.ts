/**
 * Conformance with the access patterns of design brief §5 (sources 000, 001/004, 002, 003): each
 * pattern's result and the exact DynamoDB requests it costs, through request accounting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { measure } from '../store/accounting.ts';
import { loadHierarchy } from '../tenancy/hierarchy.ts';
import type { ScopeRef } from '../tenancy/model.ts';
import { accessOn, ctx, facilities, fixtures, sleep, storeOf } from './fixtures.test-util.ts';
import type { Access } from './index.ts';

let t: TestTable;
afterAll(() => t?.drop());
beforeAll(async () => {
  t = await createTestTable();
});

describe('000 / 001 / 004 (facilities: client > project > building > zone | device)', () => {
  const h = facilities();
  let access: Access;
  let tid: string;
  let uid: string;
  let project: ScopeRef;
  let building: ScopeRef;
  let zone: ScopeRef;
  let viewer: string;
  let operator: string;

  beforeAll(async () => {
    const store = storeOf(t);
    const f = fixtures(store, h);
    access = await accessOn(store, h);
    await access.bootstrap(ctx);
    await access.permissions.ensure(ctx, ['devices:read', 'devices:write', 'devices:configure', 'zones:read', 'page:dashboard'].map((key) => ({ key })));
    tid = await f.tenant();
    project = await f.node(tid, 'project');
    building = await f.node(tid, 'building', project);
    zone = await f.node(tid, 'zone', building);
    uid = await f.user(tid);
    viewer = (await access.roles.create(ctx, tid, { name: 'viewer', permissions: [{ key: 'devices:read', effect: 'ALLOW' }, { key: 'zones:read', effect: 'ALLOW' }] })).id;
    operator = (await access.roles.create(ctx, tid, { name: 'operator', parentRoleId: viewer, permissions: [{ key: 'devices:*', effect: 'ALLOW' }, { key: 'devices:configure', effect: 'DENY' }] })).id;
    await access.assignments.create(ctx, tid, { userId: uid, roleId: operator, scope: building });
    await access.assignments.create(ctx, tid, { userId: uid, roleId: viewer, scope: project });
  }, 60_000);

  it('000 role with permissions: one Query on ROLE#<id> (METADATA + PERMISSION# items)', async () => {
    const { result, log } = await measure('p', () => access.roles.withPermissions(tid, operator));
    expect(result.role).toMatchObject({ id: operator, name: 'operator', parentRoleId: viewer, ancestorIds: [viewer] });
    expect(result.permissions).toEqual(expect.arrayContaining([{ key: 'devices:*', effect: 'ALLOW' }, { key: 'devices:configure', effect: 'DENY' }]));
    expect(result.role.effectivePermissions.map((r) => r.key)).toEqual(['devices:*', 'devices:configure', 'devices:read', 'zones:read']);
    expect(log.byCommand()).toEqual({ Query: 1 });
  });

  it('000 roles scoped to an account / 004 roles of a client: one Query on <T>#<tid> / ROLE#', async () => {
    const { result, log } = await measure('p', () => access.roles.listOfTenant(tid));
    expect(result.items.map((r) => r.name).sort()).toEqual(['operator', 'viewer']);
    expect(log.byCommand()).toEqual({ Query: 1 });
  });

  it("004 a user's roles, all and at one scope: one Query on USER#<uid> / ROLE#[<KIND>#<sid>#]", async () => {
    const all = await measure('p', () => access.assignments.ofUser(tid, uid));
    expect(all.result.items.map((a) => a.roleId).sort()).toEqual([operator, viewer].sort());
    expect(all.log.byCommand()).toEqual({ Query: 1 });
    const one = await measure('p', () => access.assignments.ofUser(tid, uid, { scope: building }));
    expect(one.result.items).toEqual([expect.objectContaining({ roleId: operator, scope: building })]);
    expect(one.log.byCommand()).toEqual({ Query: 1 });
  });

  it('001/004 scopes a user can access: one Query (by assignment); by permission: the engine, descendants included', async () => {
    const byAssignment = await measure('p', () => access.assignments.scopesOfUser(tid, uid));
    expect(byAssignment.result).toEqual(expect.arrayContaining([building, project]));
    expect(byAssignment.log.byCommand()).toEqual({ Query: 1 });
    const byPermission = await measure('p', () => access.engine.listScopes({ tenantId: tid, userId: uid, permission: 'devices:write' }));
    expect(byPermission.result.items.map((s) => s.id).sort()).toEqual([building.id, zone.id].sort());
    // wave 1: BatchGet + 2 Queries; wave 2: roles + scope nodes; then the tree index (GSI5).
    expect(byPermission.log.byCommand()).toEqual({ BatchGetItem: 3, Query: 2, 'Query:GSI5': 1 });
  });

  it('004 permission definitions: one Query on SYSTEM / PERMISSION#', async () => {
    const { result, log } = await measure('p', () => access.permissions.list({ limit: 100 }));
    expect(result.items.map((p) => p.key)).toEqual(expect.arrayContaining(['devices:read', 'page:dashboard', 'gatehouse:roles:write']));
    expect(result.items.find((p) => p.key === 'page:dashboard')).toMatchObject({ module: 'page', action: 'dashboard', isPage: true });
    expect(log.byCommand()).toEqual({ Query: 1 });
  });

  it('003 role by id (one GetItem) and by scope + name (two GetItems)', async () => {
    const byId = await measure('p', () => access.roles.get(tid, viewer));
    expect(byId.result.name).toBe('viewer');
    expect(byId.log.byCommand()).toEqual({ GetItem: 1 });
    const byName = await measure('p', () => access.roles.byName(tid, 'operator'));
    expect(byName.result.id).toBe(operator);
    expect(byName.log.byCommand()).toEqual({ GetItem: 2 });
    const global = await measure('p', () => access.roles.byName(undefined, 'tenant-admin'));
    expect(global.result).toMatchObject({ id: 'tenant-admin', scope: 'global' });
  });

  it('the engine: inheritance, wildcards, DENY beating ALLOW, descendants of the assignment scope', async () => {
    const at = (permission: string, scope: ScopeRef) => access.engine.check({ tenantId: tid, userId: uid, permission, scope });
    expect((await at('devices:write', zone)).allowed).toBe(true); // devices:* at the building, below it
    expect((await at('devices:write', project)).allowed).toBe(false); // above the assignment
    expect((await at('devices:read', project)).allowed).toBe(true); // viewer at the project
    expect(await at('devices:configure', zone)).toMatchObject({ allowed: false, reason: 'denied-by-rule' });
    expect((await at('zones:read', zone)).allowed).toBe(true); // inherited from viewer
    const why = await access.engine.explain({ tenantId: tid, userId: uid, permission: 'devices:configure', scope: zone });
    expect(why.decidedBy).toMatchObject({ type: 'assignment', roleId: operator, rule: { key: 'devices:configure', effect: 'DENY', definedBy: operator }, scope: building });
    const perms = await access.engine.listPermissions({ tenantId: tid, userId: uid, scope: zone });
    expect(perms).toMatchObject({ permissions: ['devices:*', 'devices:read', 'zones:read'], denied: ['devices:configure'] });
  });
});

describe('002 ReBAC (chapters: tenant > location), no GSI on the path', () => {
  const h = loadHierarchy('chapters');
  let access: Access;
  let tid: string;
  let uid: string;
  let nyc: ScopeRef;
  let sfo: ScopeRef;
  let teachers: string;
  let teacher: string;

  beforeAll(async () => {
    const store = storeOf(t);
    const f = fixtures(store, h);
    access = await accessOn(store, h);
    await access.permissions.ensure(ctx, ['page:dashboard', 'page:lessons', 'page:admin'].map((key) => ({ key })));
    tid = await f.tenant();
    nyc = await f.node(tid, 'location');
    sfo = await f.node(tid, 'location');
    uid = await f.user(tid);
    teacher = (await access.roles.create(ctx, tid, { name: 'teacher', permissions: [{ key: 'page:dashboard', effect: 'ALLOW' }, { key: 'page:lessons', effect: 'ALLOW' }, { key: 'page:admin', effect: 'DENY' }] })).id;
    teachers = (await access.groups.create(ctx, tid, { name: 'Teachers NYC', scope: nyc, roleIds: [teacher] })).id;
    await access.groups.addMember(ctx, tid, teachers, uid);
    await sleep(1100);
  }, 60_000);

  it('groups of a user in a location: one Query on USER#<uid> / GROUP#', async () => {
    const { result, log } = await measure('p', () => access.groups.ofUser(tid, uid, nyc));
    expect(result).toEqual([expect.objectContaining({ groupId: teachers, scope: nyc })]);
    expect(log.byCommand()).toEqual({ Query: 1 });
    expect(await access.groups.ofUser(tid, uid, sfo)).toEqual([]);
  });

  it('users of a group and roles of a group: one Query each (with the group read in the same wave)', async () => {
    const users = await measure('p', () => access.groups.members(tid, teachers));
    expect(users.result.items.map((m) => m.userId)).toEqual([uid]);
    expect(users.log.byCommand()).toEqual({ GetItem: 1, Query: 1 });
    expect(users.log.waves).toBe(1);
    const roles = await measure('p', () => access.groups.roles(tid, teachers));
    expect(roles.result.items.map((r) => r.roleId)).toEqual([teacher]);
    expect(roles.log.waves).toBe(1);
  });

  it('pages of a role (one Query) and one page check (one GetItem)', async () => {
    const pages = await measure('p', () => access.roles.pagesOf(tid, teacher));
    expect(pages.result.map((p) => p.key).sort()).toEqual(['page:admin', 'page:dashboard', 'page:lessons']);
    expect(pages.log.byCommand()).toEqual({ Query: 1 });
    const one = await measure('p', () => access.roles.pageRule(teacher, 'lessons'));
    expect(one.result).toEqual({ key: 'page:lessons', effect: 'ALLOW' });
    expect(one.log.byCommand()).toEqual({ GetItem: 1 });
  });

  it('canUserAccessPage(userId, locationId, page): base-table reads only, 3 waves cold, 1 warm', async () => {
    access.engine.cache.clear();
    const cold = await measure('p', () => access.engine.canUserAccessPage(tid, uid, nyc.id, 'lessons'));
    expect(cold.result).toBe(true);
    expect(cold.log.waves).toBe(3);
    expect(cold.log.requests.every((r) => !r.index)).toBe(true);
    const warm = await measure('p', () => access.engine.canUserAccessPage(tid, uid, nyc.id, 'dashboard'));
    expect(warm.result).toBe(true);
    expect(warm.log.waves).toBe(1);
    expect(await access.engine.canUserAccessPage(tid, uid, nyc.id, 'admin')).toBe(false);
    expect(await access.engine.canUserAccessPage(tid, uid, sfo.id, 'lessons')).toBe(false); // the group is scoped to NYC
  });
});

describe('003 authorization data (tenant grants, policies)', () => {
  const h = loadHierarchy('chapters');
  let access: Access;
  let f: ReturnType<typeof fixtures>;

  beforeAll(async () => {
    const store = storeOf(t);
    f = fixtures(store, h);
    access = await accessOn(store, h);
    await access.bootstrap(ctx);
  }, 60_000);

  it("a user's tenant grant (membership of the tenant node) gives its roles across the tenant", async () => {
    const home = await f.tenant();
    const other = await f.tenant();
    const loc = await f.node(other, 'location');
    const uid = await f.user(home);
    expect(await access.engine.check({ tenantId: other, userId: uid, permission: 'gatehouse:roles:read', scope: loc })).toMatchObject({ allowed: false, reason: 'not-a-member' });
    const grantId = await f.grant(uid, other, ['tenant-auditor']);
    const d = await access.engine.check({ tenantId: other, userId: uid, permission: 'gatehouse:roles:read', scope: loc });
    expect(d).toMatchObject({ allowed: true, source: 'cold' });
    const why = await access.engine.explain({ tenantId: other, userId: uid, permission: 'gatehouse:roles:read', scope: loc });
    expect(why.decidedBy).toMatchObject({ type: 'tenantGrant', tenantGrantId: grantId, roleId: 'tenant-auditor', scope: { kind: 'tenant', id: other } });
    expect((await access.engine.check({ tenantId: other, userId: uid, permission: 'gatehouse:roles:write', scope: loc })).allowed).toBe(false);
    await f.removeGrant(uid, other);
    expect((await access.engine.check({ tenantId: other, userId: uid, permission: 'gatehouse:roles:read', scope: loc })).allowed).toBe(false);
  });

  it('policies by exact name (GetItem), by name prefix (Query) and by id (Query on GSI2)', async () => {
    await access.policies.create(ctx, { name: 'ticket-tenant-enforce', id: 'p-abc123' });
    await access.policies.create(ctx, { name: 'ticket-owner-only' });
    await access.policies.create(ctx, { name: 'billing-admins' });
    const byName = await measure('p', () => access.policies.byName('ticket-tenant-enforce'));
    expect(byName.result).toMatchObject({ id: 'p-abc123', name: 'ticket-tenant-enforce' });
    expect(byName.log.byCommand()).toEqual({ GetItem: 1 });
    const byPrefix = await measure('p', () => access.policies.list({ prefix: 'ticket-' }));
    expect(byPrefix.result.items.map((p) => p.name)).toEqual(['ticket-owner-only', 'ticket-tenant-enforce']);
    expect(byPrefix.log.byCommand()).toEqual({ Query: 1 });
    const byId = await measure('p', () => access.policies.byId('p-abc123'));
    expect(byId.result.name).toBe('ticket-tenant-enforce');
    expect(byId.log.byCommand()).toEqual({ 'Query:GSI2': 1 });
    await expect(access.policies.create(ctx, { name: 'billing-admins' })).rejects.toMatchObject({ code: 'CONFLICT' });
    const renamed = await access.policies.update(ctx, 'p-abc123', { name: 'ticket-tenant-enforce-v2' });
    expect(renamed).toMatchObject({ id: 'p-abc123', name: 'ticket-tenant-enforce-v2', version: 2 });
    await expect(access.policies.byName('ticket-tenant-enforce')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
