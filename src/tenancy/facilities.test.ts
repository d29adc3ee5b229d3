/**
 * Conformance of the 001/004 access patterns (facilities hierarchy: client > project > building >
 * zone | device): each asserts the result, the DynamoDB requests used (command, index, count,
 * waves) and the keys written (read back by exact key).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measure } from '../store/accounting.ts';
import { keys } from '../store/keys.ts';
import type { Item } from '../store/store.ts';
import type { ScopeView, TenantView } from './schema.ts';
import { createKit, type Kit } from './kit.test-util.ts';

let k: Kit;
let tenant: TenantView;
let other: TenantView;
let p1: ScopeView, p2: ScopeView, b1: ScopeView, b2: ScopeView, b3: ScopeView;
let zones: ScopeView[];
let devices: ScopeView[];
let userId: string;

const ids = (xs: { id: string }[]) => xs.map((x) => x.id).sort();

beforeAll(async () => {
  k = await createKit('facilities');
  const s = k.tenancy.scopes;
  [tenant, other] = await Promise.all([k.tenancy.tenants.create(k.ctx, { name: 'Acme Facilities', attributes: { timezone: 'America/New_York' } }), k.tenancy.tenants.create(k.ctx, { name: 'Other Co' })]);
  p1 = await s.create(k.ctx, tenant.id, { kind: 'project', name: 'HQ campus', attributes: { status: 'active', region: 'us-east' } });
  p2 = await s.create(k.ctx, tenant.id, { kind: 'project', name: 'Warehouse', attributes: { status: 'on-hold' } });
  b1 = await s.create(k.ctx, tenant.id, { kind: 'building', parentId: p1.id, name: 'Tower A', attributes: { city: 'Boston', floors: 12, geo_latitude: 42.35, geo_longitude: -71.06 } });
  b2 = await s.create(k.ctx, tenant.id, { kind: 'building', parentId: p1.id, name: 'Tower B' });
  b3 = await s.create(k.ctx, tenant.id, { kind: 'building', parentId: p2.id, name: 'Depot' });
  zones = [];
  for (const name of ['Lobby', 'Floor 2']) zones.push(await s.create(k.ctx, tenant.id, { kind: 'zone', parentId: b1.id, name, attributes: { type: name === 'Lobby' ? 'lobby' : 'office' } }));
  devices = [];
  for (const name of ['AHU-1', 'Cam-1', 'Robot-1']) {
    devices.push(await s.create(k.ctx, tenant.id, { kind: 'device', parentId: b1.id, name, attributes: { type: name.startsWith('AHU') ? 'hvac' : name.startsWith('Cam') ? 'camera' : 'robot', configuration: { setpoint: 21 } } }));
  }
  userId = (await k.identity.users.create(k.ctx, tenant.id, { email: 'Facility.Manager@Acme.example ', firstName: 'Fran', lastName: 'Lee' })).id;
});
afterAll(() => k?.t.drop());

describe('001/004 conformance (facilities)', () => {
  it('client metadata: one GetItem `CLIENT#id` / METADATA', async () => {
    const { result, log } = await measure('client metadata', () => k.tenancy.tenants.get(tenant.id));
    expect(result).toMatchObject({ id: tenant.id, kind: 'client', name: 'Acme Facilities', status: 'active', version: 1, attributes: { timezone: 'America/New_York' } });
    expect(log.byCommand()).toEqual({ GetItem: 1 });
    expect(log.waves).toBe(1);
    const item = await k.get(keys.tenant('CLIENT', tenant.id));
    expect(item).toMatchObject({ PK: `CLIENT#${tenant.id}`, SK: 'METADATA', GSI1PK: 'ENTITY#CLIENT', GSI1SK: `CLIENT#${tenant.id}`, Type: 'Tenant', tenantId: tenant.id, version: 1 });
    expect(await k.get(keys.tenantName('acme facilities'))).toMatchObject({ Type: 'TenantName', tenantId: tenant.id });
  });

  it('all entities of a client: one Query on GSI1 `CLIENT#id`', async () => {
    const { result, log } = await measure('entities', () => k.tenancy.tenants.entities(tenant.id, { limit: 100 }));
    expect(log.byCommand()).toEqual({ 'Query:GSI1': 1 });
    expect(log.waves).toBe(1);
    const nodes = result.items.filter((e) => e.type === 'ScopeNode');
    expect(ids(nodes)).toEqual(ids([p1, p2, b1, b2, b3, ...zones, ...devices]));
    expect(result.items.filter((e) => e.type === 'User').map((e) => e.id)).toEqual([userId]);
    expect(result.cursor).toBeNull();
  });

  it('projects of a client: GSI1 begins_with PROJECT#, or the tenant child edges (base table)', async () => {
    const a = await measure('projects (GSI1)', () => k.tenancy.scopes.ofKind(tenant.id, 'project'));
    expect(ids(a.result.items)).toEqual(ids([p1, p2]));
    expect(a.log.byCommand()).toEqual({ 'Query:GSI1': 1 });
    const b = await measure('projects (edges)', () => k.tenancy.scopes.childrenOf('client', tenant.id, { childKind: 'project' }));
    expect(ids(b.result.items)).toEqual(ids([p1, p2]));
    expect(b.log.byCommand()).toEqual({ Query: 1 });
    expect(await k.get(keys.childEdge('CLIENT', tenant.id, 'PROJECT', p1.id))).toMatchObject({ Type: 'ScopeEdge', id: p1.id, name: 'HQ campus' });
  });

  it('buildings of a project: one Query `PROJECT#pid` begins_with BUILDING#', async () => {
    const { result, log } = await measure('buildings', () => k.tenancy.scopes.childrenOf('project', p1.id, { childKind: 'building' }));
    expect(ids(result.items)).toEqual(ids([b1, b2]));
    expect(result.items.find((b) => b.id === b1.id)).toMatchObject({ name: 'Tower A', attributes: { city: 'Boston', floors: 12 }, path: [{ kind: 'client', id: tenant.id }, { kind: 'project', id: p1.id }] });
    expect(log.byCommand()).toEqual({ Query: 1 });
    expect(log.waves).toBe(1);
    expect(await k.get(keys.childEdge('PROJECT', p1.id, 'BUILDING', b1.id))).toMatchObject({ PK: `PROJECT#${p1.id}`, SK: `BUILDING#${b1.id}`, Type: 'ScopeEdge' });
  });

  it('devices / zones of a building: one Query each `BUILDING#bid` begins_with DEVICE# / ZONE#', async () => {
    const d = await measure('devices', () => k.tenancy.scopes.childrenOf('building', b1.id, { childKind: 'device' }));
    expect(ids(d.result.items)).toEqual(ids(devices));
    expect(d.log.byCommand()).toEqual({ Query: 1 });
    const z = await measure('zones', () => k.tenancy.scopes.childrenOf('building', b1.id, { childKind: 'zone' }));
    expect(ids(z.result.items)).toEqual(ids(zones));
    expect(z.log.byCommand()).toEqual({ Query: 1 });
    const all = await measure('children', () => k.tenancy.scopes.childrenOf('building', b1.id));
    expect(ids(all.result.items)).toEqual(ids([...zones, ...devices]));
    expect(all.log.byCommand()).toEqual({ Query: 1 });
    expect(await k.get(keys.childEdge('BUILDING', b1.id, 'DEVICE', devices[0].id))).toMatchObject({ Type: 'ScopeEdge', kind: 'device' });
  });

  it('a node with its whole ancestor path: one strongly consistent GetItem (one BatchGetItem without the kind)', async () => {
    const d = devices[1];
    const a = await measure('node', () => k.tenancy.scopes.get(tenant.id, d.id, { kind: 'device' }));
    expect(a.result).toEqual(d);
    expect(a.result.path).toEqual([
      { kind: 'client', id: tenant.id },
      { kind: 'project', id: p1.id },
      { kind: 'building', id: b1.id },
    ]);
    expect(a.log.byCommand()).toEqual({ GetItem: 1 });
    const b = await measure('node, kind unknown', () => k.tenancy.scopes.get(tenant.id, d.id));
    expect(b.result).toEqual(d);
    expect(b.log.byCommand()).toEqual({ BatchGetItem: 1 });
    const item = await k.get(keys.scopeNode('DEVICE', d.id));
    expect(item).toMatchObject({
      Type: 'ScopeNode',
      tenantId: tenant.id,
      GSI1PK: `CLIENT#${tenant.id}`,
      GSI1SK: `DEVICE#${d.id}`,
      GSI4PK: `CLIENT#${tenant.id}`,
      GSI4SK: `DEVICE#${d.createdAt}`,
      GSI5PK: `TREE#CLIENT#${tenant.id}`,
      GSI5SK: `CLIENT#${tenant.id}/PROJECT#${p1.id}/BUILDING#${b1.id}/DEVICE#${d.id}`,
    });
    // Another tenant's path cannot reach it.
    await expect(k.tenancy.scopes.get(other.id, d.id, { kind: 'device' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('descendants of a node: one paginated Query on GSI5 begins_with its path, never a walk', async () => {
    const { result, log } = await measure('descendants', () => k.tenancy.scopes.descendantsOf({ ...p1, tenantId: tenant.id }, { limit: 100 }));
    expect(ids(result.items)).toEqual(ids([b1, b2, ...zones, ...devices]));
    expect(log.byCommand()).toEqual({ 'Query:GSI5': 1 });
    // Pre-order: every node comes after its parent.
    const order = result.items.map((n) => n.id);
    for (const n of result.items) if (n.parentKind !== 'project') expect(order.indexOf(n.parentId)).toBeLessThan(order.indexOf(n.id));
    // Paginated: pages of 3, one Query each, nothing lost or repeated.
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await measure('page', () => k.tenancy.scopes.descendantsOf({ ...p1, tenantId: tenant.id }, { limit: 3, cursor }));
      expect(page.log.byCommand()).toEqual({ 'Query:GSI5': 1 });
      seen.push(...page.result.items.map((n) => n.id));
      cursor = page.result.cursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual(order);
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(ids((await k.tenancy.scopes.descendants(tenant.id, p2.id)).items)).toEqual([b3.id]);
    expect((await k.tenancy.scopes.tree(tenant.id, { limit: 100 })).items).toHaveLength(10);
    const onlyDevices = await k.tenancy.scopes.descendants(tenant.id, p1.id, { kind: 'project', descendantKind: 'device' });
    expect(ids(onlyDevices.items)).toEqual(ids(devices));
  });

  it('recently created: GSI4 `CLIENT#id` / `<KIND>#<createdAt>` newest first; all kinds in one wave', async () => {
    const { result, log } = await measure('recent devices', () => k.tenancy.scopes.recent(tenant.id, { kind: 'device' }));
    expect(ids(result.items)).toEqual(ids(devices));
    const times = result.items.map((n) => n.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    expect(log.byCommand()).toEqual({ 'Query:GSI4': 1 });
    const since = await k.tenancy.scopes.recent(tenant.id, { kind: 'device', since: devices[2].createdAt });
    expect(since.items.map((n) => n.id)).toContain(devices[2].id);
    expect(since.items.every((n) => n.createdAt >= devices[2].createdAt)).toBe(true);

    const all = await measure('recent, all kinds', () => k.tenancy.scopes.recent(tenant.id, { limit: 4 }));
    expect(all.log.byCommand()).toEqual({ 'Query:GSI4': 4 });
    expect(all.log.waves).toBe(1);
    const seen = [...all.result.items];
    let cursor = all.result.cursor;
    while (cursor) {
      const page = await measure('recent page', () => k.tenancy.scopes.recent(tenant.id, { limit: 4, cursor }));
      expect(page.log.waves).toBe(1);
      seen.push(...page.result.items);
      cursor = page.result.cursor;
    }
    expect(ids(seen)).toEqual(ids([p1, p2, b1, b2, b3, ...zones, ...devices]));
    const created = seen.map((n) => n.createdAt);
    expect([...created].sort().reverse()).toEqual(created);
  });

  it('user by e-mail: GetItem on `EMAIL#<email>`, then GetItem on the user (strongly consistent, no GSI)', async () => {
    const { result, log } = await measure('user by e-mail', () => k.identity.users.getByEmail('  facility.manager@ACME.example'));
    expect(result).toMatchObject({ id: userId, email: 'facility.manager@acme.example', displayName: 'Fran Lee' });
    expect(log.byCommand()).toEqual({ GetItem: 2 });
    expect(log.waves).toBe(2);
    expect(await k.get(keys.email('facility.manager@acme.example'))).toMatchObject({ Type: 'EmailIdentity', userId, provider: 'password', tenantId: tenant.id });
    expect(await k.get(keys.user(userId))).toMatchObject({ GSI1PK: `CLIENT#${tenant.id}`, GSI1SK: `USER#${userId}`, GSI3PK: expect.stringMatching(/^USER#STATUS#active#[0-7]$/), GSI3SK: `9999-12-31#${userId}` });
    expect(await k.identity.users.getByEmail('nobody@acme.example')).toBeUndefined();
  });
});

describe('scope rules (facilities)', () => {
  it('attributes are validated against the kind: unknown attribute, wrong type, enum', async () => {
    const s = k.tenancy.scopes;
    await expect(s.create(k.ctx, tenant.id, { kind: 'building', parentId: p1.id, name: 'X', attributes: { floors: 'many' } })).rejects.toMatchObject({
      code: 'VALIDATION',
      details: { errors: [{ field: 'attributes.floors' }] },
    });
    await expect(s.create(k.ctx, tenant.id, { kind: 'device', parentId: b1.id, name: 'X', attributes: { type: 'toaster' } })).rejects.toMatchObject({ details: { errors: [{ field: 'attributes.type' }] } });
    await expect(s.create(k.ctx, tenant.id, { kind: 'zone', parentId: b1.id, name: 'X', attributes: { colour: 'red' } })).rejects.toMatchObject({
      details: { errors: [{ field: 'attributes.colour', message: 'Unknown field' }] },
    });
  });

  it('a parent of the wrong kind is 400, a parent in another tenant 404, and nothing is written', async () => {
    const before = await k.tenancy.scopes.tree(tenant.id, { limit: 100 });
    await expect(k.tenancy.scopes.create(k.ctx, tenant.id, { kind: 'zone', parentId: p1.id, name: 'Bad' })).rejects.toMatchObject({ code: 'VALIDATION', details: { errors: [{ field: 'parentId' }] } });
    await expect(k.tenancy.scopes.create(k.ctx, other.id, { kind: 'zone', parentId: b1.id, name: 'Bad' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(k.tenancy.scopes.create(k.ctx, tenant.id, { kind: 'building', name: 'No parent' })).rejects.toMatchObject({ details: { errors: [{ field: 'parentId' }] } });
    await expect(k.tenancy.scopes.create(k.ctx, tenant.id, { kind: 'floor', name: 'Nope' })).rejects.toMatchObject({ details: { errors: [{ field: 'kind' }] } });
    expect((await k.tenancy.scopes.tree(tenant.id, { limit: 100 })).items).toHaveLength(before.items.length);
    expect((await k.tenancy.scopes.tree(other.id)).items).toHaveLength(0);
    expect((await k.partition(`PROJECT#${p1.id}`)).filter((i) => i.Type === 'ScopeEdge')).toHaveLength(2);
  });

  it('update: merge-patches attributes at the expected version; node and child edge move together', async () => {
    const s = k.tenancy.scopes;
    const b = await s.create(k.ctx, tenant.id, { kind: 'building', parentId: p2.id, name: 'Annex', attributes: { floors: 2, city: 'Albany' } });
    const next = await s.update(k.ctx, tenant.id, b.id, { name: 'Annex North', attributes: { floors: 3, city: null } }, 1, { kind: 'building' });
    expect(next).toMatchObject({ name: 'Annex North', version: 2, attributes: { floors: 3 } });
    expect(next.attributes).not.toHaveProperty('city');
    expect(await k.get(keys.childEdge('PROJECT', p2.id, 'BUILDING', b.id))).toMatchObject({ name: 'Annex North', version: 2, attributes: { floors: 3 } });
    await expect(s.update(k.ctx, tenant.id, b.id, { name: 'Stale' }, 1)).rejects.toMatchObject({ code: 'VERSION_CONFLICT' });
    await expect(s.update(k.ctx, tenant.id, b.id, { attributes: { floors: -1 } }, 2)).rejects.toMatchObject({ details: { errors: [{ field: 'attributes.floors' }] } });
    expect((await s.get(tenant.id, b.id)).version).toBe(2);
    await s.delete(k.ctx, tenant.id, b.id, 2);
  });

  it('delete: 409 while it has children or members; a leaf goes with its edge, and the tenant stamp moves', async () => {
    const s = k.tenancy.scopes;
    await expect(s.delete(k.ctx, tenant.id, b1.id)).rejects.toMatchObject({ code: 'CONFLICT', details: { errors: [{ field: 'children' }] } });
    const z = await s.create(k.ctx, tenant.id, { kind: 'zone', parentId: b3.id, name: 'Dock' });
    await k.identity.memberships.add(k.ctx, tenant.id, { kind: 'zone', id: z.id }, userId);
    await expect(s.delete(k.ctx, tenant.id, z.id)).rejects.toMatchObject({ code: 'CONFLICT', details: { errors: [{ field: 'members' }] } });
    await k.identity.memberships.remove(k.ctx, tenant.id, { kind: 'zone', id: z.id }, userId);
    await expect(s.delete(k.ctx, tenant.id, z.id, 7)).rejects.toMatchObject({ code: 'VERSION_CONFLICT' });
    const stamp = async () => Number((await k.get(keys.tenantStamp('CLIENT', tenant.id, 0)))?.stamp ?? 0);
    const before = await stamp();
    const { log } = await measure('delete', () => s.delete(k.ctx, tenant.id, z.id, 1));
    expect(log.byCommand()).toMatchObject({ BatchGetItem: 1, Query: 2, 'Query:GSI2': 1, TransactWriteItems: 1 });
    expect(await k.get(keys.scopeNode('ZONE', z.id))).toBeUndefined();
    expect(await k.get(keys.childEdge('BUILDING', b3.id, 'ZONE', z.id))).toBeUndefined();
    expect(await stamp()).toBe(before + 1);
  });

  it('a rename reaches the denormalized scope name on its members’ edges', async () => {
    await k.identity.memberships.add(k.ctx, tenant.id, { kind: 'building', id: b2.id }, userId);
    const cur = await k.tenancy.scopes.get(tenant.id, b2.id, { kind: 'building' });
    await k.tenancy.scopes.update(k.ctx, tenant.id, b2.id, { name: 'Tower B (renovated)' }, cur.version, { kind: 'building' });
    const edge = await k.get(keys.membershipOfUser(userId, 'BUILDING', b2.id));
    expect(edge).toMatchObject({ scopeName: 'Tower B (renovated)' });
    const mine = await k.identity.memberships.ofUser(tenant.id, userId, { kind: 'building' });
    expect(mine.items.map((m: { scopeName?: string }) => m.scopeName)).toEqual(['Tower B (renovated)']);
  });

  it('every mutation wrote its audit record in the same transaction', async () => {
    const shards = await Promise.all(Array.from({ length: 16 }, (_, i) => k.partition(keys.auditShard('CLIENT', tenant.id, i).pk)));
    const actions = shards.flat().map((a: Item) => a.action);
    expect(actions).toEqual(expect.arrayContaining(['client.create', 'project.create', 'building.create', 'zone.create', 'device.create', 'user.create', 'building.update', 'zone.delete']));
  });
});
