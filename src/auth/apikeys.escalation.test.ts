/**
 * No privilege escalation through API keys: a caller can only mint a key whose role (with what it
 * inherits) grants nothing the caller does not hold at the tenant's scope. Through HTTP (the kit's
 * app: dev-issuer JWTs, API keys, the bootstrap key) against DynamoDB Local, and the pure rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { ADMIN_KEY, createKit, type Kit } from '../../test/isolation-kit.ts';
import { systemContext } from '../context.ts';
import type { Rule } from '../access/model.ts';
import { SYSTEM_ROLES } from '../access/system.ts';
import { setAuthorizer } from '../http/caller.ts';
import { measure } from '../store/accounting.ts';
import { rulesBeyond } from './authorizer.ts';

const ctx = systemContext();
const allow = (key: string): Rule => ({ key, effect: 'ALLOW' });
const deny = (key: string): Rule => ({ key, effect: 'DENY' });
const KEYS_WRITE = 'gatehouse:apikeys:write';

let t: TestTable;
let kit: Kit;
let tenantId: string;
let admin: string; // tenant-admin's JWT
let seq = 0;

beforeAll(async () => {
  t = await createTestTable();
  kit = await createKit(t);
  const a = await kit.tenantWithAdmin('Escalate');
  tenantId = a.tenantId;
  admin = a.token;
});
afterAll(() => t?.drop());

const tenantScope = () => ({ kind: kit.hierarchy.tenantKind, id: tenantId });
const role = async (permissions: Rule[], parentRoleId?: string) =>
  (await kit.access.roles.create(ctx, tenantId, { name: `role-${++seq}`, permissions, ...(parentRoleId ? { parentRoleId } : {}) })).id;

/** A user of the tenant holding `roles` at the tenant scope; returns their JWT. */
async function userWith(...roleIds: string[]) {
  const u = await kit.identity.users.create(ctx, tenantId, { email: `u${++seq}@escalate.test` } as never);
  for (const roleId of roleIds) await kit.access.assignments.create(ctx, tenantId, { userId: u.id, roleId, scope: tenantScope() });
  return { userId: u.id, token: await kit.tokenFor(u.id) };
}

const keyIds = async () => {
  const ids: string[] = [];
  let cursor: string | null | undefined;
  do {
    const page = await kit.auth.apiKeys.list(tenantId, { limit: 100, cursor });
    ids.push(...page.items.map((k) => k.id));
    cursor = page.cursor;
  } while (cursor);
  return ids.sort();
};

const mint = (credential: string, roleId: string) => kit.call(credential, 'POST', `/v1/tenants/${tenantId}/api-keys`, { name: `k${++seq}`, roleId });

/** A refused mint: 403 FORBIDDEN on roleId listing exactly `missing`, and no key written (the table read back). */
async function expectRefused(credential: string, roleId: string, missing: string[]) {
  const before = await keyIds();
  const res = await mint(credential, roleId);
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(403);
  expect(body.code).toBe('FORBIDDEN');
  expect(body.missingPermissions).toEqual(missing);
  expect(body.errors.map((e: { field: string }) => e.field)).toEqual(missing.map(() => 'roleId'));
  for (const m of missing) expect(body.errors.some((e: { message: string }) => e.message.includes(m))).toBe(true);
  expect(await keyIds()).toEqual(before);
}

async function expectMinted(credential: string, roleId: string) {
  const res = await mint(credential, roleId);
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(201);
  expect(body.roleId).toBe(roleId);
  expect(await keyIds()).toContain(body.id);
  return body as { id: string; secret: string };
}

describe('rulesBeyond (the engine’s matching, DENY beats ALLOW)', () => {
  const R = (id: string) => SYSTEM_ROLES.find((r) => r.id === id)!.permissions;
  it('holds a wildcard only through the same or a broader wildcard', () => {
    expect(rulesBeyond([allow('gatehouse:users:read'), allow('gatehouse:users:write')], [allow('gatehouse:users:*')])).toEqual(['gatehouse:users:*']);
    expect(rulesBeyond([allow('gatehouse:*')], [allow('gatehouse:users:*'), allow('gatehouse:check')])).toEqual([]);
    expect(rulesBeyond([allow('*')], [allow('gatehouse:*')])).toEqual([]);
    expect(rulesBeyond([allow('gatehouse:*')], [allow('*')])).toEqual(['*']);
    expect(rulesBeyond([allow('gatehouse:users:*')], [allow('gatehouse:*')])).toEqual(['gatehouse:*']);
  });
  it('a DENY the grantor carries must be carried by the key', () => {
    const held = [allow('gatehouse:*'), deny('gatehouse:roles:write')];
    expect(rulesBeyond(held, [allow('gatehouse:*')])).toEqual(['gatehouse:roles:write']);
    expect(rulesBeyond(held, [allow('gatehouse:*'), deny('gatehouse:roles:*')])).toEqual([]);
    expect(rulesBeyond(held, [allow('gatehouse:roles:write')])).toEqual(['gatehouse:roles:write']);
    expect(rulesBeyond([allow('gatehouse:*'), deny('gatehouse:roles:*')], [allow('gatehouse:*'), deny('gatehouse:roles:write')])).toEqual(['gatehouse:roles:*']);
  });
  it('system roles: admin ⊃ tenant-admin ⊃ tenant-auditor', () => {
    const never = deny('gatehouse:platform:admin'); // what the authorizer adds for keys
    expect(rulesBeyond(R('tenant-admin'), [...R('tenant-admin'), never])).toEqual([]);
    expect(rulesBeyond(R('tenant-admin'), [...R('tenant-auditor'), never])).toEqual([]);
    expect(rulesBeyond(R('tenant-admin'), [...R('admin'), never])).toEqual(['*']);
    expect(rulesBeyond(R('tenant-auditor'), [...R('tenant-admin'), never])).toEqual(['gatehouse:*']);
    expect(rulesBeyond(R('admin'), [...R('admin'), never])).toEqual([]);
  });
});

describe('minting API keys over HTTP: the caller rule', () => {
  it('a user holding only apikeys:write cannot mint tenant-admin, admin or a richer custom role (nothing written)', async () => {
    const keysOnly = await role([allow(KEYS_WRITE)]);
    const u = await userWith(keysOnly);
    await expectRefused(u.token, 'tenant-admin', ['gatehouse:*']);
    await expectRefused(u.token, 'admin', ['*']);
    await expectRefused(u.token, await role([allow(KEYS_WRITE), allow('gatehouse:users:write')]), ['gatehouse:users:write']);
    // Inherited rules count: the child's own rules are a subset, its parent's are not.
    const parent = await role([allow('gatehouse:roles:write'), allow('gatehouse:users:read')]);
    await expectRefused(u.token, await role([allow(KEYS_WRITE)], parent), ['gatehouse:roles:write', 'gatehouse:users:read']);
    // A role within what the caller holds: minted.
    await expectMinted(u.token, await role([allow(KEYS_WRITE)]));
    await expectMinted(u.token, keysOnly);
  });

  it('a subset role is mintable, DENYs included; a DENY narrower than the caller’s is not enough', async () => {
    const u = await userWith(await role([allow(KEYS_WRITE), allow('gatehouse:users:read'), allow('gatehouse:users:write'), allow('gatehouse:check')]));
    await expectMinted(u.token, await role([allow('gatehouse:users:read'), allow('gatehouse:check')]));
    await expectMinted(u.token, await role([allow('gatehouse:users:read'), deny('gatehouse:users:write')]));
    // Wildcards: holding some gatehouse (or users) permissions is not holding gatehouse:* (or gatehouse:users:*).
    await expectRefused(u.token, await role([allow('gatehouse:*')]), ['gatehouse:*']);
    await expectRefused(u.token, await role([allow('gatehouse:users:*')]), ['gatehouse:users:*']);

    // A caller with gatehouse:* but denied roles:write cannot hand out roles:write through a pattern.
    const v = await userWith(await role([allow('gatehouse:*'), deny('gatehouse:roles:write')]));
    await expectRefused(v.token, 'tenant-admin', ['gatehouse:roles:write']);
    await expectRefused(v.token, await role([allow('gatehouse:*')]), ['gatehouse:roles:write']);
    await expectMinted(v.token, await role([allow('gatehouse:*'), deny('gatehouse:roles:*')]));
    await expectMinted(v.token, 'tenant-auditor');
  });

  it('counts only what the caller holds now at the tenant scope (not at a sub-scope, not before its window)', async () => {
    const node = await kit.tenancy.scopes.create(ctx, tenantId, { kind: 'project', name: `p${++seq}` });
    const u = await userWith(await role([allow(KEYS_WRITE)]));
    await kit.access.assignments.create(ctx, tenantId, { userId: u.userId, roleId: 'tenant-admin', scope: { kind: 'project', id: node.id } });
    await kit.access.assignments.create(ctx, tenantId, { userId: u.userId, roleId: 'tenant-auditor', scope: tenantScope(), startAt: new Date(Date.now() + 3_600_000).toISOString() });
    await expectRefused(u.token, 'tenant-admin', ['gatehouse:*']);
    await expectRefused(u.token, 'tenant-auditor', SYSTEM_ROLES.find((r) => r.id === 'tenant-auditor')!.permissions.map((p) => p.key).sort());
    // Granted now: the next mint sees it (strongly consistent).
    await kit.access.assignments.create(ctx, tenantId, { userId: u.userId, roleId: await role(SYSTEM_ROLES.find((r) => r.id === 'tenant-auditor')!.permissions), scope: tenantScope() });
    await expectMinted(u.token, 'tenant-auditor');
  });

  it('a tenant admin can mint tenant-auditor and tenant-admin, not admin (*)', async () => {
    const auditorKey = await expectMinted(admin, 'tenant-auditor');
    const adminKey = await expectMinted(admin, 'tenant-admin');
    await expectRefused(admin, 'admin', ['*']);
    // The keys work with their roles.
    expect((await kit.call(auditorKey.secret, 'GET', `/v1/tenants/${tenantId}/roles`)).status).toBe(200);
    expect((await kit.call(adminKey.secret, 'GET', `/v1/tenants/${tenantId}/api-keys`)).status).toBe(200);
  });

  it('an API-key caller is held to its own role', async () => {
    // tenant-auditor plus the right to mint keys: passes authorize(), then the caller rule decides.
    const auditorRules = SYSTEM_ROLES.find((r) => r.id === 'tenant-auditor')!.permissions;
    const auditorMinter = await role([...auditorRules, allow(KEYS_WRITE)]);
    const { secret } = await expectMinted(ADMIN_KEY, auditorMinter);
    await expectRefused(secret, 'tenant-admin', ['gatehouse:*']);
    await expectRefused(secret, await role([allow('gatehouse:users:write')]), ['gatehouse:users:write']);
    await expectMinted(secret, 'tenant-auditor');
    // A tenant-admin key mints tenant-admin (its role never holds platform admin, nor does the new key).
    const adminKey = await expectMinted(ADMIN_KEY, 'tenant-admin');
    await expectMinted(adminKey.secret, 'tenant-admin');
    await expectRefused(adminKey.secret, 'admin', ['*']);
    // Service level: a key principal holding tenant-auditor lacks what tenant-admin grants.
    const g = await kit.auth.grantorAt({ actor: { id: 'gh_x', type: 'apiKey', tenantId }, platformAdmin: false, kind: 'apiKey', roleId: 'tenant-auditor' }, tenantId);
    expect(await g.lacking(SYSTEM_ROLES.find((r) => r.id === 'tenant-admin')!.permissions)).toEqual(['gatehouse:*']);
  });

  it('the bootstrap key and platform admins may mint any tenant role; platform-only roles stay refused', async () => {
    await expectMinted(ADMIN_KEY, 'admin');
    expect((await mint(ADMIN_KEY, 'platform-admin')).status).toBe(400);
    // A platform tenant whose platform-admin holder acts on other tenants.
    const platform = await kit.tenantWithAdmin('Platform', 'platform-admin');
    const kit2 = await createKit(t, { auth: { platformTenantId: platform.tenantId } });
    try {
      const token = await kit2.tokenFor(platform.userId);
      const res = await kit2.call(token, 'POST', `/v1/tenants/${tenantId}/api-keys`, { name: 'ops', roleId: 'admin' });
      expect(res.status, await res.clone().text()).toBe(201);
      expect((await kit2.call(token, 'POST', `/v1/tenants/${tenantId}/api-keys`, { name: 'ops', roleId: 'platform-admin' })).status).toBe(400);
    } finally {
      // createKit installs its authorizer as the process-wide fallback: give the first kit its own back.
      setAuthorizer(kit.auth.authorizer);
    }
  });

  it('the caller rule adds no wave: its read runs alongside the tenant and role reads', async () => {
    const adminUser = (await kit.auth.authenticateCredential(admin)).actor.id;
    const principal = { actor: { id: adminUser, type: 'user' as const }, platformAdmin: false, kind: 'jwt' as const };
    // Past the engine's settle guard (1 s after the last grant change), a check validates its cache entry with one stamp read.
    await new Promise((r) => setTimeout(r, 1100));
    await kit.access.engine.listPermissions({ tenantId, userId: adminUser, scope: tenantScope() });
    const { log } = await measure('mint', () =>
      kit.auth.apiKeys.create({ actor: principal.actor }, tenantId, { name: 'waves', roleId: 'tenant-auditor' }, { grantorAt: (tid) => kit.auth.grantorAt(principal, tid) }),
    );
    expect(log.summary()).toMatchObject({ waves: 2, byCommand: { GetItem: 2, BatchGetItem: 1, TransactWriteItems: 1 } });
  });

  it('direct service calls outside the system context must pass the caller rule', async () => {
    const userCtx = { actor: { id: 'someone', type: 'user' as const } };
    const before = await keyIds();
    await expect(kit.auth.apiKeys.create(userCtx, tenantId, { name: 'x', roleId: 'tenant-auditor' })).rejects.toMatchObject({ code: 'INTERNAL' });
    expect(await keyIds()).toEqual(before);
  });
});
