import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../store/keys.ts';
import type { Item } from '../store/store.ts';
import { createKit, type Kit } from './kit.test-util.ts';
import { DEMO_TENANT_NAME, seedTenancyDemo } from '../demo/tenancy.ts';

let k: Kit;
beforeAll(async () => {
  k = await createKit('facilities');
});
afterAll(() => k?.t.drop());

const auditCount = async (tenantId: string) =>
  (await Promise.all(Array.from({ length: 16 }, (_, i) => k.partition(keys.auditShard('CLIENT', tenantId, i).pk)))).reduce((n, p) => n + p.length, 0);

describe('tenancy demo seed', () => {
  it('creates a realistic facilities client, and a second run changes nothing', async () => {
    const first = await seedTenancyDemo({ tenancy: k.tenancy, identity: k.identity }, k.ctx);
    expect(first).toMatchObject({ created: true, tenantId: expect.any(String) });
    expect(first.projectIds).toHaveLength(3);
    expect(first.buildingIds).toHaveLength(6);
    expect(first.zoneIds).toHaveLength(18);
    expect(first.deviceIds).toHaveLength(24);
    expect(first.userIds.length).toBeGreaterThanOrEqual(50);
    const t = first.tenantId!;
    expect(await k.tenancy.tenants.getByName(DEMO_TENANT_NAME)).toMatchObject({ id: t });
    const tree = await k.tenancy.scopes.tree(t, { limit: 100 });
    expect(tree.items).toHaveLength(51);
    const building = await k.tenancy.scopes.get(t, first.buildingIds[0], { kind: 'building' });
    expect(building.attributes).toMatchObject({ city: expect.any(String), floors: expect.any(Number), geo_latitude: expect.any(Number) });
    const members = await k.identity.memberships.members(t, { kind: 'project', id: first.projectIds[0] }, { limit: 100 });
    expect(members.items).toHaveLength(20);
    expect((await k.identity.users.byStatus('inactive', { limit: 100 })).items.length).toBeGreaterThan(0);

    const audits = await auditCount(t);
    const items = (await k.store.queryAll<Item>({ index: 'GSI1', pk: `CLIENT#${t}` })).length;
    const second = await seedTenancyDemo({ tenancy: k.tenancy, identity: k.identity }, k.ctx);
    expect(second.created).toBe(false);
    expect(second.tenantId).toBe(t);
    for (const key of ['projectIds', 'buildingIds', 'zoneIds', 'deviceIds', 'userIds'] as const) expect([...second[key]].sort()).toEqual([...first[key]].sort());
    expect(await auditCount(t)).toBe(audits);
    expect((await k.store.queryAll<Item>({ index: 'GSI1', pk: `CLIENT#${t}` })).length).toBe(items);
  });
});
