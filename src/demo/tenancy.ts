/**
 * Demo data for `npm start` (facilities hierarchy): one realistic client with projects, buildings,
 * zones and devices, 60 users with a mix of types, statuses and end dates, and their project
 * memberships. Idempotent: the tenant name is unique, so a second run finds it and changes nothing.
 */
import { systemContext, type RequestContext } from '../context.ts';
import { isGatehouseError } from '../errors.ts';
import type { IdentityServices } from '../identity/index.ts';
import type { CreateUserInput } from '../identity/schema.ts';
import type { TenancyServices } from '../tenancy/index.ts';
import type { ScopeView } from '../tenancy/schema.ts';

export const DEMO_TENANT_NAME = 'Acme Facilities Group';

export interface TenancyDemoResult {
  /** False when the demo tenant already existed (nothing was written) or the hierarchy is not facilities. */
  created: boolean;
  skipped?: string;
  tenantId?: string;
  projectIds: string[];
  buildingIds: string[];
  zoneIds: string[];
  deviceIds: string[];
  userIds: string[];
}

const PROJECTS = [
  { name: 'HQ Campus', attributes: { description: 'Headquarters campus retrofit', status: 'active', start_date: '2024-03-01', region: 'us-east' }, city: 'Boston', state: 'MA', tz: 'America/New_York', lat: 42.3601, lng: -71.0589 },
  { name: 'Distribution Network', attributes: { description: 'Midwest warehouses', status: 'active', start_date: '2023-09-15', region: 'us-central' }, city: 'Chicago', state: 'IL', tz: 'America/Chicago', lat: 41.8781, lng: -87.6298 },
  { name: 'Retail Refresh', attributes: { description: 'Store modernization', status: 'on-hold', start_date: '2025-01-10', end_date: '2026-06-30', region: 'us-south' }, city: 'Austin', state: 'TX', tz: 'America/Chicago', lat: 30.2672, lng: -97.7431 },
] as const;
const ZONES = [
  { name: 'Main Lobby', attributes: { floor: '1', type: 'lobby', area_sqft: 2400 } },
  { name: 'Open Office', attributes: { floor: '2', type: 'office', area_sqft: 12000 } },
  { name: 'Plant Room', attributes: { floor: 'B1', type: 'utility', area_sqft: 1800 } },
] as const;
const DEVICES = [
  { name: 'AHU', attributes: { type: 'hvac', manufacturer: 'Trane', model: 'IntelliPak 2' } },
  { name: 'Lobby Camera', attributes: { type: 'camera', manufacturer: 'Axis', model: 'P3265-LVE' } },
  { name: 'Cleaning Robot', attributes: { type: 'robot', manufacturer: 'Brain Corp', model: 'EMMA' } },
  { name: 'CO2 Sensor', attributes: { type: 'sensor', manufacturer: 'Honeywell', model: 'C7632' } },
] as const;
const FIRST = ['Ava', 'Ben', 'Chloe', 'Diego', 'Emma', 'Farah', 'Gabe', 'Hana', 'Ivan', 'Jade', 'Kofi', 'Lena', 'Mateo', 'Nia', 'Omar', 'Priya', 'Quinn', 'Rosa', 'Sam', 'Tara'];
const LAST = ['Nguyen', 'Smith', 'Okafor'];
const DEPARTMENTS = ['Facilities', 'Security', 'Operations', 'Finance', 'Engineering'];
const TYPES = ['internal', 'client_admin', 'external_customer', 'external_tenant'] as const;

/** Runs `fn` over `items` with at most `n` in flight (DynamoDB Local is single-node). */
async function pool<T, R>(items: T[], n: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

const ids = (xs: { id: string }[]) => xs.map((x) => x.id);

/** The ids of an existing demo tenant's data (listing reads; nothing written). */
async function existing(s: { tenancy: TenancyServices; identity: IdentityServices }, tenantId: string): Promise<TenancyDemoResult> {
  const all = async <T>(read: (cursor: string | null) => Promise<{ items: T[]; cursor: string | null }>) => {
    const out: T[] = [];
    let cursor: string | null = null;
    do {
      const page = await read(cursor);
      out.push(...page.items);
      cursor = page.cursor;
    } while (cursor);
    return out;
  };
  const ofKind = (kind: string) => all((cursor) => s.tenancy.scopes.ofKind(tenantId, kind, { limit: 100, cursor }));
  const [projects, buildings, zones, devices, users] = await Promise.all([
    ofKind('project'),
    ofKind('building'),
    ofKind('zone'),
    ofKind('device'),
    all((cursor) => s.identity.users.byTenant(tenantId, { limit: 100, cursor })),
  ]);
  return { created: false, tenantId, projectIds: ids(projects), buildingIds: ids(buildings), zoneIds: ids(zones), deviceIds: ids(devices), userIds: ids(users) };
}

export async function seedTenancyDemo(
  s: { tenancy: TenancyServices; identity: IdentityServices },
  ctx: RequestContext = systemContext('demo-seed'),
): Promise<TenancyDemoResult> {
  const h = s.tenancy.hierarchy;
  const empty = { projectIds: [], buildingIds: [], zoneIds: [], deviceIds: [], userIds: [] };
  if (h.tenantKind !== 'client' || !['project', 'building', 'zone', 'device'].every((k) => h.kinds[k])) {
    return { created: false, skipped: `the tenancy demo is for the facilities hierarchy (this deployment uses ${h.name})`, ...empty };
  }
  const found = await s.tenancy.tenants.getByName(DEMO_TENANT_NAME);
  if (found) return existing(s, found.id);

  let tenantId: string;
  try {
    tenantId = (
      await s.tenancy.tenants.create(ctx, {
        name: DEMO_TENANT_NAME,
        attributes: { primary_contact_name: 'Morgan Reyes', primary_contact_email: 'morgan.reyes@acme-facilities.example', timezone: 'America/New_York', billing_email: 'ap@acme-facilities.example', phone: '+16175550100' },
      })
    ).id;
  } catch (e) {
    // Another instance seeded it at the same moment.
    if (isGatehouseError(e, 'CONFLICT')) {
      const t = await s.tenancy.tenants.getByName(DEMO_TENANT_NAME);
      if (t) return existing(s, t.id);
    }
    throw e;
  }
  const scopes = s.tenancy.scopes;
  await s.tenancy.resources.create(ctx, tenantId, { kind: 'client', id: tenantId }, 'address', { label: 'Head office', line1: '100 Federal St', city: 'Boston', state: 'MA', postalCode: '02110', country: 'US', isPrimary: true });
  await s.tenancy.resources.create(ctx, tenantId, { kind: 'client', id: tenantId }, 'tech_user', { name: 'bms-integration', description: 'Building management system sync', clientId: 'bms-sync' });

  const projects = await pool([...PROJECTS], 3, (p) => scopes.create(ctx, tenantId, { kind: 'project', name: p.name, attributes: { ...p.attributes } }));
  const buildingSpecs = PROJECTS.flatMap((p, pi) =>
    ['North', 'South'].map((side, bi) => ({
      parentId: projects[pi].id,
      name: `${p.city} ${side} Tower`,
      attributes: {
        address: `${100 + bi * 20} ${side} Ave`,
        city: p.city,
        state: p.state,
        country: 'US',
        postal_code: String(10000 + pi * 1000 + bi),
        timezone: p.tz,
        square_footage: 150000 + bi * 50000,
        floors: 8 + bi * 6,
        year_built: 1985 + pi * 9 + bi,
        status: 'active',
        geo_latitude: p.lat + bi * 0.01,
        geo_longitude: p.lng + bi * 0.01,
      },
    })),
  );
  const buildings = await pool(buildingSpecs, 6, (b) => scopes.create(ctx, tenantId, { kind: 'building', ...b }));
  const zones = await pool(
    buildings.flatMap((b) => ZONES.map((z) => ({ b, z }))),
    6,
    ({ b, z }) => scopes.create(ctx, tenantId, { kind: 'zone', parentId: b.id, name: `${z.name}`, attributes: { ...z.attributes, description: `${z.name} of ${b.name}` } }),
  );
  const zonesOf = (b: ScopeView) => zones.filter((z) => z.parentId === b.id);
  const devices = await pool(
    buildings.flatMap((b, bi) => DEVICES.map((d, di) => ({ b, bi, d, di }))),
    6,
    ({ b, bi, d, di }) =>
      scopes.create(ctx, tenantId, {
        kind: 'device',
        parentId: b.id,
        name: `${d.name} ${bi + 1}-${di + 1}`,
        attributes: {
          ...d.attributes,
          serial_number: `SN-${bi + 1}${di + 1}-${(bi + 1) * 7919 + di}`,
          zone_id: zonesOf(b)[di % 3].id,
          location_description: zonesOf(b)[di % 3].name,
          status: di === 3 && bi % 2 ? 'inactive' : 'active',
          configuration: d.attributes.type === 'hvac' ? { setpoint_c: 21, mode: 'auto' } : { firmware: '2.4.1' },
          last_seen_at: '2025-06-01T12:00:00.000Z',
        },
      }),
  );

  const people: CreateUserInput[] = Array.from({ length: 60 }, (_, i) => {
    const first = FIRST[i % FIRST.length];
    const last = LAST[Math.floor(i / FIRST.length)];
    const status = i % 15 === 7 ? 'inactive' : i % 20 === 13 ? 'disabled' : 'active';
    return {
      email: `${first}.${last}@acme-facilities.example`.toLowerCase(),
      ...(i % 3 === 0 ? { phone: `+1617555${String(1000 + i).padStart(4, '0')}` } : {}),
      ...(i % 4 === 0 ? { username: `${first}${last[0]}`.toLowerCase() } : {}),
      firstName: first,
      lastName: last,
      title: i < 3 ? 'Facilities Director' : i % 5 === 0 ? 'Technician' : 'Coordinator',
      department: DEPARTMENTS[i % DEPARTMENTS.length],
      userType: i < 3 ? 'client_admin' : TYPES[i % TYPES.length],
      status,
      ...(i % 6 === 0 ? { endDate: `2026-${String((i % 12) + 1).padStart(2, '0')}-28` } : {}),
    } as CreateUserInput;
  });
  const users = await pool(people, 6, (p) => s.identity.users.create(ctx, tenantId, p));
  await pool(users, 6, (u, i) => s.identity.memberships.add(ctx, tenantId, { kind: 'project', id: projects[i % projects.length].id }, u.id));

  return { created: true, tenantId, projectIds: ids(projects), buildingIds: ids(buildings), zoneIds: ids(zones), deviceIds: ids(devices), userIds: ids(users) };
}
