/**
 * Conformance of the 002 (ReBAC, no GSI on this path) and 003 (authorization data) access patterns
 * on the chapters hierarchy: tenant > location with a unique human code.
 */
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserView } from '../identity/schema.ts';
import { measure } from '../store/accounting.ts';
import { keys } from '../store/keys.ts';
import type { ScopeView, TenantView } from './schema.ts';
import { createKit, type Kit } from './kit.test-util.ts';

let k: Kit;
let t1: TenantView, t2: TenantView;
let nyc: ScopeView, bos: ScopeView;
let ada: UserView, bo: UserView, cy: UserView;
const roleA = ulid();
const roleOther = ulid();

beforeAll(async () => {
  k = await createKit('chapters');
  [t1, t2] = await Promise.all([k.tenancy.tenants.create(k.ctx, { name: 'Code Club' }), k.tenancy.tenants.create(k.ctx, { name: 'Robotics League' })]);
  nyc = await k.tenancy.scopes.create(k.ctx, t1.id, { kind: 'location', name: 'New York', attributes: { code: 'nyc001', timezone: 'America/New_York', geo: { latitude: 40.7, longitude: -74 } } });
  bos = await k.tenancy.scopes.create(k.ctx, t1.id, { kind: 'location', name: 'Boston', attributes: { code: 'BOS-1' } });
  ada = await k.identity.users.create(k.ctx, t1.id, { email: 'ada@club.example', phone: '+1 (415) 555-0100', username: 'Ada.L', firstName: 'Ada', lastName: 'Lovelace', userType: 'lead', provider: 'google' });
  bo = await k.identity.users.create(k.ctx, t1.id, { email: 'bo@club.example', firstName: 'Bo', userType: 'member' });
  cy = await k.identity.users.create(k.ctx, t2.id, { email: 'cy@league.example', firstName: 'Cy' });
  for (const u of [ada, bo]) await k.identity.memberships.add(k.ctx, t1.id, { kind: 'location', id: nyc.id }, u.id);
  await k.identity.memberships.add(k.ctx, t1.id, { kind: 'location', id: bos.id }, ada.id);
  // Roles belong to the access issue: role-shaped items written by exact key.
  await k.store.put({ ...keys.role(roleA), Type: 'Role', id: roleA, tenantId: t1.id, name: 'teacher' });
  await k.store.put({ ...keys.role(roleOther), Type: 'Role', id: roleOther, tenantId: t2.id, name: 'judge' });
});
afterAll(() => k?.t.drop());

describe('002 conformance (chapters)', () => {
  it('e-mail → user: GetItem `EMAIL#…` then GetItem `USER#…`', async () => {
    const { result, log } = await measure('email → user', () => k.identity.users.getByEmail('ADA@club.example'));
    expect(result).toMatchObject({ id: ada.id, provider: 'google', displayName: 'Ada Lovelace', userType: 'lead' });
    expect(log.byCommand()).toEqual({ GetItem: 2 });
    expect(log.waves).toBe(2);
    expect(await k.get(keys.email('ada@club.example'))).toMatchObject({ userId: ada.id, provider: 'google' });
  });

  it('user: one GetItem `USER#uid` / METADATA', async () => {
    const { result, log } = await measure('user', () => k.identity.users.get(ada.id));
    expect(result).toEqual(ada);
    expect(log.byCommand()).toEqual({ GetItem: 1 });
  });

  it('location: one GetItem `LOCATION#lid` / METADATA', async () => {
    const { result, log } = await measure('location', () => k.tenancy.scopes.get(t1.id, nyc.id, { kind: 'location' }));
    expect(result).toMatchObject({ id: nyc.id, name: 'New York', code: 'NYC001', path: [{ kind: 'tenant', id: t1.id }], attributes: { code: 'nyc001' } });
    expect(log.byCommand()).toEqual({ GetItem: 1 });
    expect(await k.get(keys.scopeNode('LOCATION', nyc.id))).toMatchObject({ GSI1PK: `TENANT#${t1.id}`, GSI1SK: `LOCATION#${nyc.id}` });
  });

  it('location code → location: ONE GetItem `LOCATION_CODE#<code>` (the guard carries the node)', async () => {
    const { result, log } = await measure('code → location', () => k.tenancy.scopes.getByCode(t1.id, 'nyc001'));
    expect(result).toEqual(nyc);
    expect(log.byCommand()).toEqual({ GetItem: 1 });
    expect(await k.get(keys.locationCode('NYC001'))).toMatchObject({ PK: 'LOCATION_CODE#NYC001', SK: 'METADATA', nodeId: nyc.id, kind: 'location', tenantId: t1.id });
    expect(await k.tenancy.scopes.getByCode(t2.id, 'NYC001')).toBeUndefined();
    expect(await k.tenancy.scopes.getByCode(t1.id, 'NOPE')).toBeUndefined();
  });

  it('locations of a user: one Query `USER#uid` begins_with LOCATION#', async () => {
    const { result, log } = await measure('locations of user', () => k.identity.memberships.ofUser(t1.id, ada.id, { kind: 'location' }));
    expect(result.items.map((m) => m.scopeName).sort()).toEqual(['Boston', 'New York']);
    expect(result.items.find((m) => m.scope.id === nyc.id)).toMatchObject({ scopeCode: 'NYC001', userId: ada.id, tenantId: t1.id });
    expect(log.byCommand()).toEqual({ Query: 1 });
  });

  it('users of a location: one Query `LOCATION#lid` begins_with USER#', async () => {
    const { result, log } = await measure('users of location', () => k.identity.memberships.members(t1.id, { kind: 'location', id: nyc.id }));
    expect(result.items.map((m) => m.userDisplayName).sort()).toEqual(['Ada Lovelace', 'Bo']);
    expect(result.items.find((m) => m.userId === bo.id)).toMatchObject({ userType: 'member' });
    expect(log.byCommand()).toEqual({ Query: 1 });
    expect(await k.get(keys.membershipOfScope('LOCATION', nyc.id, bo.id))).toMatchObject({ Type: 'Member', userDisplayName: 'Bo' });
    expect(await k.get(keys.membershipOfUser(bo.id, 'LOCATION', nyc.id))).toMatchObject({ Type: 'Membership', scopeName: 'New York', scopeCode: 'NYC001' });
    expect((await k.identity.memberships.members(t2.id, { kind: 'location', id: nyc.id })).items).toEqual([]);
  });

  it('membership is idempotent and refused for a user of another tenant without a grant', async () => {
    const again = await k.identity.memberships.add(k.ctx, t1.id, { kind: 'location', id: nyc.id }, bo.id);
    expect(again.created).toBe(false);
    await expect(k.identity.memberships.add(k.ctx, t1.id, { kind: 'location', id: nyc.id }, cy.id)).rejects.toMatchObject({ code: 'NOT_FOUND', details: { errors: [{ field: 'userId' }] } });
    expect(await k.get(keys.membershipOfUser(cy.id, 'LOCATION', nyc.id))).toBeUndefined();
  });

  it('code uniqueness: a duplicate is 409 naming attributes.code; a code change moves its guard; lookups follow renames', async () => {
    await expect(k.tenancy.scopes.create(k.ctx, t2.id, { kind: 'location', name: 'Other NYC', attributes: { code: 'NYC001' } })).rejects.toMatchObject({
      code: 'CONFLICT',
      details: { errors: [{ field: 'attributes.code' }] },
    });
    expect((await k.tenancy.scopes.ofKind(t2.id, 'location')).items).toEqual([]);
    const moved = await k.tenancy.scopes.update(k.ctx, t1.id, bos.id, { name: 'Boston Central', attributes: { code: 'bos002' } }, 1, { kind: 'location' });
    expect(moved.code).toBe('BOS002');
    expect(await k.get(keys.locationCode('BOS-1'))).toBeUndefined();
    expect(await k.tenancy.scopes.getByCode(t1.id, 'BOS002')).toEqual(moved);
    expect(await k.get(keys.membershipOfUser(ada.id, 'LOCATION', bos.id))).toMatchObject({ scopeName: 'Boston Central', scopeCode: 'BOS002' });
    await expect(k.tenancy.scopes.update(k.ctx, t1.id, bos.id, { attributes: { code: 'NYC001' } }, 2, { kind: 'location' })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await k.get(keys.locationCode('BOS002'))).toMatchObject({ nodeId: bos.id });
  });
});

describe('003 conformance (chapters)', () => {
  it('tenant by id: one GetItem; by name: ONE GetItem on `TENANT_NAME#<name>` (case/space-insensitive)', async () => {
    const a = await measure('tenant by id', () => k.tenancy.tenants.get(t1.id));
    expect(a.log.byCommand()).toEqual({ GetItem: 1 });
    const b = await measure('tenant by name', () => k.tenancy.tenants.getByName('  code   CLUB '));
    expect(b.result).toEqual(a.result);
    expect(b.log.byCommand()).toEqual({ GetItem: 1 });
    expect(await k.get(keys.tenantName('code club'))).toMatchObject({ tenantId: t1.id, Type: 'TenantName' });
    expect(await k.get(keys.tenant('TENANT', t1.id))).toMatchObject({ GSI1PK: 'ENTITY#TENANT', Type: 'Tenant' });
  });

  it('a rename moves the name guard atomically; a taken name is 409 naming name', async () => {
    await expect(k.tenancy.tenants.create(k.ctx, { name: 'ROBOTICS league' })).rejects.toMatchObject({ code: 'CONFLICT', details: { errors: [{ field: 'name' }] } });
    await expect(k.tenancy.tenants.update(k.ctx, t1.id, { name: 'Robotics League' }, 1)).rejects.toMatchObject({ code: 'CONFLICT', details: { errors: [{ field: 'name' }] } });
    const renamed = await k.tenancy.tenants.update(k.ctx, t1.id, { name: 'Code Club NYC' }, 1);
    expect(renamed).toMatchObject({ name: 'Code Club NYC', version: 2 });
    expect(await k.get(keys.tenantName('code club'))).toBeUndefined();
    expect(await k.tenancy.tenants.getByName('code club nyc')).toEqual(renamed);
    await expect(k.tenancy.tenants.update(k.ctx, t1.id, { name: 'x' }, 1)).rejects.toMatchObject({ code: 'VERSION_CONFLICT' });
  });

  it('user by id: one GetItem', async () => {
    const { log } = await measure('user by id', () => k.identity.users.get(bo.id));
    expect(log.byCommand()).toEqual({ GetItem: 1 });
  });

  it('unique e-mail / phone / username in ONE transaction; a clash is 409 naming the field and writes nothing', async () => {
    const { result, log } = await measure('create user', () =>
      k.identity.users.create(k.ctx, t1.id, { email: 'dee@club.example', phone: '+14155550199', username: 'dee', firstName: 'Dee' }),
    );
    expect(log.byCommand()).toEqual({ GetItem: 1, TransactWriteItems: 1 });
    for (const key of [keys.email('dee@club.example'), keys.phone('+14155550199'), keys.username('dee')]) expect(await k.get(key)).toMatchObject({ userId: result.id });
    expect(await k.get(keys.phone('+14155550100'))).toMatchObject({ userId: ada.id });
    expect(await k.get(keys.username('ada.l'))).toMatchObject({ userId: ada.id });

    for (const [field, input] of [
      ['email', { email: ' ADA@club.example' }],
      ['phone', { email: 'new1@club.example', phone: '+1 415 555 0100' }],
      ['username', { email: 'new2@club.example', username: 'ADA.L' }],
    ] as const) {
      await expect(k.identity.users.create(k.ctx, t1.id, input)).rejects.toMatchObject({ code: 'CONFLICT', details: { errors: [{ field }] } });
    }
    expect(await k.get(keys.email('new1@club.example'))).toBeUndefined();
    expect(await k.get(keys.email('new2@club.example'))).toBeUndefined();
    expect((await k.identity.users.byTenant(t1.id)).items.map((u) => u.email).sort()).toEqual(['ada@club.example', 'bo@club.example', 'dee@club.example']);
  });

  it("changing e-mail / phone / username moves its guard atomically; a taken one is 409 and changes nothing", async () => {
    const dee = (await k.identity.users.getByEmail('dee@club.example'))!;
    const next = await k.identity.users.update(k.ctx, t1.id, dee.id, { email: 'Dee.New@club.example', phone: null, username: 'dee2' }, dee.version);
    expect(next).toMatchObject({ email: 'dee.new@club.example', username: 'dee2', version: dee.version + 1 });
    expect(next.phone).toBeUndefined();
    expect(await k.get(keys.email('dee@club.example'))).toBeUndefined();
    expect(await k.get(keys.email('dee.new@club.example'))).toMatchObject({ userId: dee.id });
    expect(await k.get(keys.phone('+14155550199'))).toBeUndefined();
    expect(await k.get(keys.username('dee'))).toBeUndefined();
    expect(await k.get(keys.username('dee2'))).toMatchObject({ userId: dee.id });
    await expect(k.identity.users.update(k.ctx, t1.id, dee.id, { username: 'ada.l' }, next.version)).rejects.toMatchObject({ code: 'CONFLICT', details: { errors: [{ field: 'username' }] } });
    expect(await k.get(keys.username('dee2'))).toMatchObject({ userId: dee.id });
    expect((await k.identity.users.get(dee.id)).version).toBe(next.version);
  });

  it("tenant grants: add (roles), a user's membership in a tenant (GetItem), a user's grants (Query), grant by id (GSI2)", async () => {
    // Ada's home is t1: t2 adds her with her e-mail (a user id alone is refused, src/identity/grants.test.ts).
    await expect(k.identity.memberships.grant(k.ctx, t2.id, ada.id, { roleIds: [] })).rejects.toMatchObject({ code: 'NOT_FOUND', details: { errors: [{ field: 'userId' }] } });
    const { result, log } = await measure('grant', () => k.identity.memberships.grant(k.ctx, t2.id, ada.id, { roleIds: [], email: 'ada@club.example' }));
    expect(result.created).toBe(true);
    expect(log.byCommand()).toEqual({ BatchGetItem: 1, TransactWriteItems: 1 });
    const g = result.grant;
    expect(g).toMatchObject({ tenantId: t2.id, userId: ada.id, roleIds: [], tenantName: 'Robotics League', userEmail: 'ada@club.example' });
    expect(await k.get(keys.membershipOfScope('TENANT', t2.id, ada.id))).toMatchObject({ GSI2PK: `TENANT_GRANT#${g.id}`, GSI2SK: `TENANT_GRANT#${g.id}`, tenantGrantId: g.id });
    expect(await k.get(keys.membershipOfUser(ada.id, 'TENANT', t2.id))).toMatchObject({ tenantGrantId: g.id, roleIds: [] });

    const check = await measure('check', () => k.identity.memberships.check(t2.id, ada.id));
    expect(check.result).toMatchObject({ id: g.id });
    expect(check.log.byCommand()).toEqual({ GetItem: 1 });
    expect(await k.identity.memberships.check(t2.id, bo.id)).toBeUndefined();

    await k.identity.memberships.grant(k.ctx, t1.id, ada.id, { roleIds: [roleA] });
    const mine = await measure("user's tenants", () => k.identity.memberships.tenantsOf(ada.id));
    expect(mine.result.items.map((x) => x.tenantId).sort()).toEqual([t1.id, t2.id].sort());
    expect(mine.result.items.find((x) => x.tenantId === t1.id)?.roleIds).toEqual([roleA]);
    expect(mine.log.byCommand()).toEqual({ Query: 1 });

    const byId = await measure('grant by id', () => k.identity.memberships.byId(g.id));
    expect(byId.result).toMatchObject({ id: g.id, tenantId: t2.id, userId: ada.id });
    expect(byId.log.byCommand()).toEqual({ 'Query:GSI2': 1 });
    expect(await k.identity.memberships.byId(g.id, t1.id)).toBeUndefined();
    expect((await k.identity.memberships.grantsOf(t2.id)).items.map((x) => x.userId)).toEqual([ada.id]);
  });

  it('grant roles: replaced in place (same grant id); a role of another tenant is refused; revoke bumps the user stamp', async () => {
    const first = await k.identity.memberships.check(t1.id, ada.id);
    const r = await k.identity.memberships.grant(k.ctx, t1.id, ada.id, { roleIds: [] });
    expect(r).toMatchObject({ created: false, grant: { id: first!.id, roleIds: [] } });
    await expect(k.identity.memberships.grant(k.ctx, t1.id, bo.id, { roleIds: [roleOther] })).rejects.toMatchObject({ code: 'VALIDATION', details: { errors: [{ field: 'roleIds.0' }] } });
    expect(await k.identity.memberships.check(t1.id, bo.id)).toBeUndefined();
    const stampBefore = Number((await k.get(keys.userStamp(ada.id)))?.stamp ?? 0);
    await k.identity.memberships.revoke(k.ctx, t2.id, ada.id);
    expect(await k.identity.memberships.check(t2.id, ada.id)).toBeUndefined();
    expect(await k.get(keys.membershipOfUser(ada.id, 'TENANT', t2.id))).toBeUndefined();
    expect(Number((await k.get(keys.userStamp(ada.id)))?.stamp)).toBe(stampBefore + 1);
    await expect(k.identity.memberships.revoke(k.ctx, t2.id, ada.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('a user rename reaches the scope side of its memberships and grants', async () => {
    const cur = await k.identity.users.get(bo.id);
    await k.identity.memberships.grant(k.ctx, t1.id, bo.id, { roleIds: [roleA] });
    await k.identity.users.update(k.ctx, t1.id, bo.id, { firstName: 'Bo', lastName: 'Diddley' }, cur.version);
    expect(await k.get(keys.membershipOfScope('LOCATION', nyc.id, bo.id))).toMatchObject({ userDisplayName: 'Bo Diddley' });
    expect(await k.get(keys.membershipOfScope('TENANT', t1.id, bo.id))).toMatchObject({ userDisplayName: 'Bo Diddley' });
  });

  it('suspend / reactivate move the status and every tenant stamp shard', async () => {
    const cur = await k.tenancy.tenants.get(t2.id);
    const s = await k.tenancy.tenants.suspend(k.ctx, t2.id, cur.version);
    expect(s).toMatchObject({ status: 'suspended', version: cur.version + 1 });
    expect(await k.tenancy.tenants.getByName('robotics league')).toMatchObject({ status: 'suspended' });
    for (let i = 0; i < 8; i++) expect(await k.get(keys.tenantStamp('TENANT', t2.id, i))).toMatchObject({ stamp: 1 });
    expect(await k.tenancy.tenants.suspend(k.ctx, t2.id)).toMatchObject({ version: s.version });
    const r = await k.tenancy.tenants.reactivate(k.ctx, t2.id, s.version);
    expect(r.status).toBe('active');
    expect(await k.get(keys.tenantStamp('TENANT', t2.id, 3))).toMatchObject({ stamp: 2 });
  });
});
