/**
 * Conformance of the 000 access patterns (platform hierarchy: account > enterprise | workstream,
 * a workstream linked to an enterprise): result, DynamoDB requests, keys written.
 */
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserView } from '../identity/schema.ts';
import { measure } from '../store/accounting.ts';
import { keys } from '../store/keys.ts';
import type { CatalogItemView, ScopeView, TenantView } from './schema.ts';
import { createKit, type Kit } from './kit.test-util.ts';

let k: Kit;
let a1: TenantView, a2: TenantView;
let e1: ScopeView, e2: ScopeView, w1: ScopeView, w2: ScopeView, w3: ScopeView;
let p1: CatalogItemView, p2: CatalogItemView, s1: CatalogItemView;
let users: UserView[];
let licenseId: string;
const ids = (xs: { id: string }[]) => xs.map((x) => x.id).sort();

beforeAll(async () => {
  k = await createKit('platform');
  const s = k.tenancy.scopes;
  [a1, a2] = await Promise.all([k.tenancy.tenants.create(k.ctx, { name: 'Globex', attributes: { industry: 'energy' } }), k.tenancy.tenants.create(k.ctx, { name: 'Initech' })]);
  e1 = await s.create(k.ctx, a1.id, { kind: 'enterprise', name: 'Globex Europe', attributes: { tier: 'premium' } });
  e2 = await s.create(k.ctx, a1.id, { kind: 'enterprise', name: 'Globex Americas' });
  w1 = await s.create(k.ctx, a1.id, { kind: 'workstream', name: 'Billing revamp', attributes: { enterpriseId: e1.id, status: 'active' } });
  w2 = await s.create(k.ctx, a1.id, { kind: 'workstream', name: 'Data lake', attributes: { enterpriseId: e1.id } });
  w3 = await s.create(k.ctx, a1.id, { kind: 'workstream', name: 'Field ops', attributes: { enterpriseId: e2.id } });
  const r = k.tenancy.resources;
  const owner = { kind: 'account', id: a1.id };
  await r.create(k.ctx, a1.id, owner, 'address', { label: 'HQ', line1: '1 Main St', city: 'Springfield', country: 'US', isPrimary: true });
  await r.create(k.ctx, a1.id, owner, 'address', { label: 'Billing', line1: '2 Side St', city: 'Springfield', country: 'US' });
  await r.create(k.ctx, a1.id, owner, 'tech_user', { name: 'ci-bot', clientId: 'svc-ci' });
  // Licenses belong to the entitlements issue: one license-shaped item, written by exact key.
  licenseId = ulid();
  await k.store.put({ ...keys.license('ACCOUNT', a1.id, licenseId), Type: 'License', id: licenseId, tenantId: a1.id, seats: 10 }, { ifNotExists: true });
  const c = k.tenancy.catalog;
  [p1, p2, s1] = await Promise.all([c.create(k.ctx, 'product', { name: 'Analytics' }), c.create(k.ctx, 'product', { name: 'Payments', sku: 'PAY-1' }), c.create(k.ctx, 'service', { name: 'Premium support' })]);
  await c.assign(k.ctx, a1.id, e1.id, 'product', p1.id);
  await c.assign(k.ctx, a1.id, e1.id, 'product', p2.id);
  await c.assign(k.ctx, a1.id, e1.id, 'service', s1.id);
  await r.create(k.ctx, a1.id, { kind: 'workstream', id: w1.id }, 'tool', { name: 'Jira', url: 'https://jira.example.com', type: 'tracker' });
  await r.create(k.ctx, a1.id, { kind: 'workstream', id: w1.id }, 'tool', { name: 'GitHub', url: 'https://github.com/globex' });
  const u = k.identity.users;
  users = [
    await u.create(k.ctx, a1.id, { email: 'ann@globex.example', firstName: 'Ann', endDate: '2026-03-01' }),
    await u.create(k.ctx, a1.id, { email: 'bob@globex.example', firstName: 'Bob', endDate: '2025-12-31' }),
    await u.create(k.ctx, a1.id, { email: 'cy@globex.example', firstName: 'Cy' }),
    await u.create(k.ctx, a1.id, { email: 'dee@globex.example', status: 'inactive', endDate: '2024-06-30' }),
    await u.create(k.ctx, a1.id, { email: 'eve@globex.example', endDate: '2026-01-15' }),
    await u.create(k.ctx, a2.id, { email: 'fay@initech.example', endDate: '2025-11-30' }),
  ];
  await k.identity.memberships.add(k.ctx, a1.id, { kind: 'workstream', id: w1.id }, users[0].id);
  await k.identity.memberships.add(k.ctx, a1.id, { kind: 'workstream', id: w2.id }, users[0].id);
  await k.identity.memberships.add(k.ctx, a1.id, { kind: 'enterprise', id: e1.id }, users[0].id);
});
afterAll(() => k?.t.drop());

describe('000 conformance (platform)', () => {
  it('all accounts: one Query on GSI1 `ENTITY#ACCOUNT`', async () => {
    const { result, log } = await measure('accounts', () => k.tenancy.tenants.list());
    expect(ids(result.items)).toEqual(ids([a1, a2]));
    expect(log.byCommand()).toEqual({ 'Query:GSI1': 1 });
    expect(await k.get(keys.tenant('ACCOUNT', a1.id))).toMatchObject({ GSI1PK: 'ENTITY#ACCOUNT', GSI1SK: `ACCOUNT#${a1.id}` });
  });

  it("all enterprises (of an account): one Query on GSI1 `ACCOUNT#aid` begins_with ENTERPRISE#", async () => {
    const { result, log } = await measure('enterprises', () => k.tenancy.scopes.ofKind(a1.id, 'enterprise'));
    expect(ids(result.items)).toEqual(ids([e1, e2]));
    expect(log.byCommand()).toEqual({ 'Query:GSI1': 1 });
    expect((await k.tenancy.scopes.ofKind(a2.id, 'enterprise')).items).toEqual([]);
  });

  it('account with addresses, tech users, licenses, workstreams: ONE Query `ACCOUNT#aid`', async () => {
    const { result, log } = await measure('account overview', () => k.tenancy.tenants.overview(a1.id));
    expect(log.byCommand()).toEqual({ Query: 1 });
    expect(result.tenant).toMatchObject({ id: a1.id, name: 'Globex' });
    expect(result.addresses.map((a) => a.label).sort()).toEqual(['Billing', 'HQ']);
    expect(result.techUsers.map((t) => t.name)).toEqual(['ci-bot']);
    expect(result.licenses.map((l) => l.id)).toEqual([licenseId]);
    expect(ids(result.children.workstream)).toEqual(ids([w1, w2, w3]));
    expect(ids(result.children.enterprise)).toEqual(ids([e1, e2]));
    const addr = result.addresses[0];
    expect(await k.get(keys.address('ACCOUNT', a1.id, String(addr.id)))).toMatchObject({ Type: 'Address', tenantId: a1.id });
    expect(await k.get(keys.techUser('ACCOUNT', a1.id, String(result.techUsers[0].id)))).toMatchObject({ Type: 'TechUser', clientId: 'svc-ci' });
    expect(await k.get(keys.childEdge('ACCOUNT', a1.id, 'WORKSTREAM', w1.id))).toMatchObject({ Type: 'ScopeEdge' });
  });

  it('enterprise with its products and services: ONE Query `ENTERPRISE#eid`', async () => {
    const { result, log } = await measure('enterprise catalog', () => k.tenancy.catalog.scopeCatalog(a1.id, e1.id, 'enterprise'));
    expect(log.byCommand()).toEqual({ Query: 1 });
    expect(result.scope).toMatchObject({ id: e1.id, name: 'Globex Europe' });
    expect(result.products.map((p) => p.itemName).sort()).toEqual(['Analytics', 'Payments']);
    expect(result.services.map((p) => p.itemName)).toEqual(['Premium support']);
    expect(await k.get(keys.ownerProduct('ENTERPRISE', e1.id, p1.id))).toMatchObject({ Type: 'ScopeProduct', GSI2PK: `PRODUCT#${p1.id}`, GSI2SK: `ENTERPRISE#${e1.id}` });
    expect(await k.get(keys.ownerService('ENTERPRISE', e1.id, s1.id))).toMatchObject({ Type: 'ScopeService' });
    // Another account cannot read it through its own path.
    await expect(k.tenancy.catalog.scopeCatalog(a2.id, e1.id, 'enterprise')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('products / services: GSI1 `ENTITY#PRODUCT`; a rename reaches assignments; delete refused while assigned', async () => {
    const { result, log } = await measure('products', () => k.tenancy.catalog.list('product'));
    expect(ids(result.items)).toEqual(ids([p1, p2]));
    expect(log.byCommand()).toEqual({ 'Query:GSI1': 1 });
    await k.tenancy.catalog.update(k.ctx, 'product', p2.id, { name: 'Payments Pro' }, 1);
    expect(await k.get(keys.ownerProduct('ENTERPRISE', e1.id, p2.id))).toMatchObject({ itemName: 'Payments Pro' });
    await expect(k.tenancy.catalog.delete(k.ctx, 'product', p1.id, 1)).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await k.tenancy.catalog.holders('product', p1.id)).items.map((h) => h.scope)).toEqual([{ kind: 'enterprise', id: e1.id }]);
  });

  it('users by account: one Query on GSI1 `ACCOUNT#aid` begins_with USER#', async () => {
    const { result, log } = await measure('users by account', () => k.tenancy && k.identity.users.byTenant(a1.id));
    expect(ids(result.items)).toEqual(ids(users.slice(0, 5)));
    expect(log.byCommand()).toEqual({ 'Query:GSI1': 1 });
  });

  it('workstreams by account: one Query `ACCOUNT#aid` begins_with WORKSTREAM#', async () => {
    const { result, log } = await measure('workstreams by account', () => k.tenancy.scopes.childrenOf('account', a1.id, { childKind: 'workstream' }));
    expect(ids(result.items)).toEqual(ids([w1, w2, w3]));
    expect(log.byCommand()).toEqual({ Query: 1 });
  });

  it('workstreams by enterprise: one Query on GSI2 `ENTERPRISE#eid` begins_with WORKSTREAM#', async () => {
    const { result, log } = await measure('workstreams by enterprise', () => k.tenancy.scopes.linked(a1.id, 'workstream', e1.id));
    expect(ids(result.items)).toEqual(ids([w1, w2]));
    expect(log.byCommand()).toEqual({ 'Query:GSI2': 1 });
    expect(await k.get(keys.scopeNode('WORKSTREAM', w3.id))).toMatchObject({ GSI2PK: `ENTERPRISE#${e2.id}`, GSI2SK: `WORKSTREAM#${w3.id}` });
    expect((await k.tenancy.scopes.linked(a2.id, 'workstream', e1.id)).items).toEqual([]);
  });

  it('a workstream must link to an enterprise of its own account', async () => {
    await expect(k.tenancy.scopes.create(k.ctx, a1.id, { kind: 'workstream', name: 'x' })).rejects.toMatchObject({ details: { errors: [{ field: 'attributes.enterpriseId' }] } });
    await expect(k.tenancy.scopes.create(k.ctx, a2.id, { kind: 'workstream', name: 'x', attributes: { enterpriseId: e1.id } })).rejects.toMatchObject({
      code: 'VALIDATION',
      details: { errors: [{ field: 'attributes.enterpriseId' }] },
    });
    // Relinking moves the GSI2 entry.
    const moved = await k.tenancy.scopes.update(k.ctx, a1.id, w3.id, { attributes: { enterpriseId: e1.id } }, 1, { kind: 'workstream' });
    expect(moved.attributes.enterpriseId).toBe(e1.id);
    expect(ids((await k.tenancy.scopes.linked(a1.id, 'workstream', e1.id)).items)).toEqual(ids([w1, w2, w3]));
    await k.tenancy.scopes.update(k.ctx, a1.id, w3.id, { attributes: { enterpriseId: e2.id } }, 2, { kind: 'workstream' });
  });

  it('tools of a workstream: one Query `WORKSTREAM#wid` begins_with TOOL#', async () => {
    const { result, log } = await measure('tools', () => k.tenancy.resources.list(a1.id, { kind: 'workstream', id: w1.id }, 'tool'));
    expect(result.items.map((t) => t.name).sort()).toEqual(['GitHub', 'Jira']);
    expect(log.byCommand()).toEqual({ Query: 1 });
    expect(await k.get(keys.tool('WORKSTREAM', w1.id, result.items[0].id))).toMatchObject({ Type: 'Tool', owner: { kind: 'workstream', id: w1.id } });
    await expect(k.tenancy.resources.create(k.ctx, a1.id, { kind: 'enterprise', id: e1.id }, 'tool', { name: 'x' })).rejects.toMatchObject({ code: 'VALIDATION' });
  });

  it('user with workstream assignments: ONE Query `USER#uid`', async () => {
    const { result, log } = await measure('user with workstreams', () => k.identity.users.withMemberships(users[0].id, { kind: 'workstream' }));
    expect(log.byCommand()).toEqual({ Query: 1 });
    expect(result.user).toMatchObject({ id: users[0].id, email: 'ann@globex.example' });
    expect(result.memberships.map((m) => m.scope.id).sort()).toEqual(ids([w1, w2]));
    expect(result.memberships.map((m) => m.scopeName).sort()).toEqual(['Billing revamp', 'Data lake']);
    const all = await k.identity.users.withMemberships(users[0].id);
    expect(all.memberships).toHaveLength(3);
    expect(await k.get(keys.membershipOfUser(users[0].id, 'WORKSTREAM', w1.id))).toMatchObject({ Type: 'Membership', scopeKind: 'workstream' });
    expect(await k.get(keys.membershipOfScope('WORKSTREAM', w1.id, users[0].id))).toMatchObject({ Type: 'Member', userDisplayName: 'Ann', userEmail: 'ann@globex.example' });
  });

  it('users by status, by end date: one wave of Queries over the 8 GSI3 shards, merged', async () => {
    const { result, log } = await measure('active users', () => k.identity.users.byStatus('active'));
    expect(log.byCommand()).toEqual({ 'Query:GSI3': 8 });
    expect(log.waves).toBe(1);
    const active = users.filter((u) => u.status === 'active');
    expect(ids(result.items)).toEqual(ids(active));
    const ends = result.items.map((u) => u.endDate ?? '9999-12-31');
    expect([...ends].sort()).toEqual(ends);
    expect(result.items.at(-1)?.id).toBe(users[2].id); // no end date sorts last

    const expiring = await k.identity.users.byStatus('active', { endBefore: '2026-02-01' });
    expect(expiring.items.map((u) => u.email)).toEqual(['fay@initech.example', 'bob@globex.example', 'eve@globex.example']);
    expect((await k.identity.users.byStatus('inactive')).items.map((u) => u.email)).toEqual(['dee@globex.example']);

    // Pages of 2 across shards: ordered, nothing lost or repeated, one wave per page.
    const seen: UserView[] = [];
    let cursor: string | null = null;
    do {
      const page = await measure('page', () => k.identity.users.byStatus('active', { limit: 2, cursor }));
      expect(page.log.waves).toBe(1);
      seen.push(...page.result.items);
      cursor = page.result.cursor;
    } while (cursor);
    expect(seen.map((u) => u.id)).toEqual(result.items.map((u) => u.id));
  });

  it('a status change moves the user between GSI3 partitions and bumps its access stamp', async () => {
    const u = users[4];
    await k.identity.users.update(k.ctx, a1.id, u.id, { status: 'inactive' }, 1);
    expect(await k.get(keys.user(u.id))).toMatchObject({ GSI3PK: expect.stringMatching(/^USER#STATUS#inactive#/), GSI3SK: `2026-01-15#${u.id}` });
    expect(await k.get(keys.userStamp(u.id))).toMatchObject({ stamp: 1 });
    expect((await k.identity.users.byStatus('inactive')).items.map((x) => x.id)).toContain(u.id);
  });
});
