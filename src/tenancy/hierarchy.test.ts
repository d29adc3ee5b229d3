/** The hierarchy loader: the shipped configs, attribute schemas, and every way a config is refused. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_HIERARCHIES, childKinds, loadHierarchy, parseHierarchy, prefixOf } from './hierarchy.ts';

const base = () => ({
  name: 'test',
  tenant: { kind: 'org', attributes: { plan: { type: 'enum', values: ['free', 'pro'] } } },
  kinds: {
    site: { parent: 'org', uniqueCode: 'code', attributes: { code: { type: 'string', required: true, maxLength: 10 } } },
    room: { parent: 'site', links: ['site'], attributes: { siteId: { type: 'string' } } },
  },
});
const refused = (json: unknown, message: RegExp) => expect(() => parseHierarchy(json, 'test.json')).toThrow(message);

describe('shipped hierarchies', () => {
  it('facilities (default): client > project > building > zone | device, with the 001 attributes', () => {
    const h = loadHierarchy();
    expect(h).toMatchObject({ name: 'facilities', tenantKind: 'client', T: 'CLIENT', tenantResources: ['address', 'tech_user'] });
    expect(Object.fromEntries(Object.values(h.kinds).map((k) => [k.name, [k.parent, k.prefix]]))).toEqual({
      project: ['client', 'PROJECT'],
      building: ['project', 'BUILDING'],
      zone: ['building', 'ZONE'],
      device: ['building', 'DEVICE'],
    });
    expect(childKinds(h, 'building')).toEqual(['zone', 'device']);
    const b = h.kinds.building.attributes;
    expect(b.safeParse({ address: '1 Main', city: 'Boston', state: 'MA', country: 'US', postal_code: '02110', timezone: 'America/New_York', square_footage: 1e5, floors: 10, year_built: 1990, status: 'active', geo_latitude: 42.3, geo_longitude: -71 }).success).toBe(true);
    expect(b.safeParse({ geo_latitude: 91 }).success).toBe(false);
    const d = h.kinds.device.attributes;
    expect(d.safeParse({ type: 'hvac', manufacturer: 'Acme', model: 'X', serial_number: 'S1', location_description: 'roof', zone_id: 'z', status: 'inactive', configuration: { a: [1, { b: true }] }, last_seen_at: '2025-01-01T00:00:00Z' }).success).toBe(true);
    expect(d.safeParse({ last_seen_at: 'yesterday' }).success).toBe(false);
    expect(h.kinds.zone.attributes.safeParse({ floor: '2', area_sqft: 300, type: 'office', parent_zone_id: 'z0', geo_json: { type: 'Polygon' } }).success).toBe(true);
    expect(h.kinds.project.attributes.safeParse({ status: 'on-hold', start_date: '2025-01-01', end_date: '2025-12-31', region: 'eu', owner_user_id: 'u1', description: 'd' }).success).toBe(true);
  });

  it('platform: account > enterprise | workstream; workstream links to an enterprise and owns tools', () => {
    const h = loadHierarchy('platform');
    expect(h.T).toBe('ACCOUNT');
    expect(h.kinds.workstream).toMatchObject({ parent: 'account', links: ['enterprise'], resources: ['tool'] });
    expect(h.kinds.enterprise).toMatchObject({ parent: 'account', catalog: true });
    expect(h.kinds.workstream.attributes.safeParse({}).success).toBe(false);
    expect(h.kinds.workstream.attributes.safeParse({ enterpriseId: '01J8Z0E2Z8D2A3J7A7Y2H9GQ9C' }).success).toBe(true);
  });

  it('chapters: tenant > location with a unique code', () => {
    const h = loadHierarchy('chapters');
    expect(h).toMatchObject({ tenantKind: 'tenant', T: 'TENANT' });
    expect(h.kinds.location).toMatchObject({ parent: 'tenant', uniqueCode: 'code' });
    expect(prefixOf(h, 'location')).toBe('LOCATION');
    expect(h.kinds.location.attributes.safeParse({ code: 'NYC001', geo: { latitude: 1, longitude: 2 } }).success).toBe(true);
    expect(h.kinds.location.attributes.safeParse({ code: 'NYC 1' }).success).toBe(false);
  });

  it('GATEHOUSE_HIERARCHY picks the default; a file path works too', () => {
    const prev = process.env.GATEHOUSE_HIERARCHY;
    try {
      process.env.GATEHOUSE_HIERARCHY = 'chapters';
      expect(loadHierarchy().name).toBe('chapters');
    } finally {
      if (prev === undefined) delete process.env.GATEHOUSE_HIERARCHY;
      else process.env.GATEHOUSE_HIERARCHY = prev;
    }
    const dir = mkdtempSync(path.join(tmpdir(), 'gh-'));
    const file = path.join(dir, 'mine.json');
    writeFileSync(file, JSON.stringify(base()));
    const h = loadHierarchy(file);
    expect(h).toMatchObject({ name: 'test', tenantKind: 'org', T: 'ORG' });
    expect(h.kinds.room.children).toEqual([]);
    expect(h.kinds.site.children).toEqual(['room']);
  });
});

describe('built-in hierarchies travel inside the code (they also work bundled, see src/deploy/bundle.test.ts)', () => {
  const dir = path.resolve(import.meta.dirname, '../../hierarchies');

  it('every hierarchies/*.json is a built-in, loaded without reading that directory', () => {
    expect(readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort()).toEqual([...BUILT_IN_HIERARCHIES].sort());
    const cwd = process.cwd();
    const elsewhere = mkdtempSync(path.join(tmpdir(), 'gh-cwd-'));
    process.chdir(elsewhere);
    try {
      for (const name of BUILT_IN_HIERARCHIES) {
        const builtIn = loadHierarchy(name);
        const fromFile = parseHierarchy(JSON.parse(readFileSync(path.join(dir, `${name}.json`), 'utf8')), name);
        expect(builtIn.name).toBe(name);
        expect(Object.keys(builtIn.kinds)).toEqual(Object.keys(fromFile.kinds));
        expect(builtIn.tenantKind).toBe(fromFile.tenantKind);
      }
      // A relative path is still a file, resolved against the working directory (/var/task on Lambda).
      writeFileSync('local.json', JSON.stringify(base()));
      expect(loadHierarchy('local.json').name).toBe('test');
      expect(() => loadHierarchy('hierarchies/facilities.json')).toThrow(/no such file .*hierarchies\/facilities\.json/);
    } finally {
      process.chdir(cwd);
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});

describe('attribute specs become strict zod schemas', () => {
  const h = parseHierarchy(
    {
      ...base(),
      kinds: {
        site: {
          parent: 'org',
          attributes: {
            name2: { type: 'string', minLength: 2, maxLength: 5, pattern: '^[a-z]+$' },
            email: { type: 'string', format: 'email' },
            url: { type: 'string', format: 'url' },
            n: { type: 'number', integer: true, min: 1, max: 3 },
            b: { type: 'boolean' },
            e: { type: 'enum', values: ['x', 'y'] },
            m: { type: 'map', maxKeys: 2, maxBytes: 40 },
            g: { type: 'geo' },
            tags: { type: 'array', items: { type: 'string', maxLength: 3 }, maxItems: 2 },
            plain: { type: 'string' },
          },
        },
      },
    },
    'specs.json',
  );
  const s = h.kinds.site.attributes;
  const ok = (v: unknown) => expect(s.safeParse(v).success, JSON.stringify(v)).toBe(true);
  const bad = (v: unknown) => expect(s.safeParse(v).success, JSON.stringify(v)).toBe(false);
  it('accepts what the spec allows', () => {
    ok({});
    ok({ name2: 'abc', email: 'a@b.co', url: 'https://x.example', n: 2, b: false, e: 'y', m: { k: 1 }, g: { latitude: 0, longitude: 0 }, tags: ['a', 'bb'], plain: 'p' });
  });
  it('refuses unknown attributes, wrong types, and oversize values', () => {
    bad({ other: 1 });
    bad({ name2: 'a' });
    bad({ name2: 'abcdef' });
    bad({ name2: 'ABC' });
    bad({ email: 'nope' });
    bad({ url: 'ftp://x' });
    bad({ n: 1.5 });
    bad({ n: 4 });
    bad({ b: 'true' });
    bad({ e: 'z' });
    bad({ m: { a: 1, b: 2, c: 3 } });
    bad({ m: { a: 'x'.repeat(50) } });
    bad({ g: { latitude: 100, longitude: 0 } });
    bad({ g: { latitude: 1, longitude: 1, alt: 3 } });
    bad({ tags: ['a', 'b', 'c'] });
    bad({ tags: ['long'] });
    bad({ plain: 'x'.repeat(1001) });
  });
  it('caps the whole attribute map at 16 KB', () => {
    const many = parseHierarchy({ ...base(), kinds: { site: { parent: 'org', attributes: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`a${i}`, { type: 'string', maxLength: 1000 }])) } } });
    const v = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`a${i}`, 'x'.repeat(1000)]));
    expect(many.kinds.site.attributes.safeParse(v).success).toBe(false);
  });
});

describe('an invalid config stops start-up with a message naming the problem', () => {
  it('unknown parent kind', () => refused({ ...base(), kinds: { site: { parent: 'orgg' } } }, /kinds\.site\.parent: unknown kind "orgg"/));
  it('a cycle', () => refused({ ...base(), kinds: { a: { parent: 'b' }, b: { parent: 'a' } } }, /cycle \(a → b → a\)/));
  it('a kind that is its own parent', () => refused({ ...base(), kinds: { a: { parent: 'a' } } }, /cannot be its own parent/));
  it('reserved kind names', () => {
    refused({ ...base(), kinds: { user: { parent: 'org' } } }, /kinds\.user: kind name "user" is reserved/);
    refused({ ...base(), kinds: { scope: { parent: 'org' } } }, /"scope" is reserved/);
    refused({ ...base(), tenant: { kind: 'role' } }, /tenant\.kind: kind name "role" is reserved/);
    refused({ ...base(), kinds: { location_code: { parent: 'org' } } }, /reserved/);
  });
  it('a kind colliding with another kind’s code guard', () => refused({ ...base(), kinds: { site: { parent: 'org' }, site_code: { parent: 'org' } } }, /collides with the unique-code guard of kind "site"/));
  it('bad kind names', () => {
    refused({ ...base(), kinds: { 'Big-Kind': { parent: 'org' } } }, /must be lower-case/);
    refused({ ...base(), kinds: { org: { parent: 'org' } } }, /is the tenant kind/);
  });
  it('bad attribute specs', () => {
    refused({ ...base(), kinds: { site: { parent: 'org', attributes: { x: { type: 'strin' } } } } }, /kinds\.site\.attributes\.x/);
    refused({ ...base(), kinds: { site: { parent: 'org', attributes: { x: { type: 'string', maxLenght: 3 } } } } }, /unknown field\(s\) "maxLenght"/);
    refused({ ...base(), kinds: { site: { parent: 'org', attributes: { x: { type: 'string', pattern: '([' } } } } }, /kinds\.site\.attributes\.x\.pattern is not a valid regular expression/);
    refused({ ...base(), kinds: { site: { parent: 'org', attributes: { x: { type: 'number', min: 5, max: 1 } } } } }, /min 5 is greater than max 1/);
    refused({ ...base(), kinds: { site: { parent: 'org', attributes: { x: { type: 'enum', values: ['a', 'a'] } } } } }, /duplicates/);
    refused({ ...base(), kinds: { site: { parent: 'org', attributes: { 'bad name': { type: 'boolean' } } } } }, /attribute names/);
  });
  it('unique code and link declarations', () => {
    refused({ ...base(), kinds: { site: { parent: 'org', uniqueCode: 'code' } } }, /uniqueCode: "code" is not a declared attribute/);
    refused({ ...base(), kinds: { site: { parent: 'org', uniqueCode: 'code', attributes: { code: { type: 'string' } } } } }, /must be a required string/);
    refused({ ...base(), kinds: { site: { parent: 'org' }, room: { parent: 'site', links: ['site'] } } }, /declare the attribute "siteId"/);
    refused({ ...base(), kinds: { site: { parent: 'org' }, room: { parent: 'site', links: ['nowhere'] } } }, /links: unknown kind "nowhere"/);
  });
  it('unknown fields, missing parts, bad resources', () => {
    refused({ ...base(), colour: 'red' }, /\(root\): unknown field\(s\) "colour"/);
    refused({ ...base(), kinds: {} }, /declare at least one scope kind/);
    refused({ name: 'x', kinds: { a: { parent: 'b' } } }, /tenant/);
    refused({ ...base(), kinds: { site: { parent: 'org', resources: ['spaceship'] } } }, /kinds\.site\.resources\.0/);
  });
  it('a missing file or a file that is not JSON', () => {
    expect(() => loadHierarchy('/nonexistent/h.json')).toThrow(/no such file .*GATEHOUSE_HIERARCHY takes facilities, platform, chapters/);
    const dir = mkdtempSync(path.join(tmpdir(), 'gh-'));
    const file = path.join(dir, 'broken.json');
    writeFileSync(file, '{ "name": ');
    expect(() => loadHierarchy(file)).toThrow(/broken\.json: not valid JSON/);
    expect(() => loadHierarchy(file)).toThrow(expect.objectContaining({ code: 'CONFIG' }));
  });
});
