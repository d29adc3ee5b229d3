/**
 * Tenant-isolation suite, GENERATED FROM THE OPENAPI DOCUMENT: every operation the app serves is
 * attacked, so a new route is covered without anyone remembering (and a route whose path
 * parameter has no fixture fails the suite until one is added below).
 *
 * Callers hold roles in tenant A only: A's tenant-admin (a JWT user, and an API key with the same
 * role) and A's tenant-auditor (read-only). For every operation:
 *  - path:    B's ids in the path (B's tenant, or A's tenant with B's entity ids)   → 403 / 404
 *  - body:    A's path, B's ids in every id-like body field                         → no 2xx with B data
 *  - query:   A's path, B's ids in every id-like query parameter                    → no B data returned
 *  - cursor:  a cursor of one of B's listings replayed on A's listings               → 400 / 403 / 404
 * and after each refused attempt no write was sent to DynamoDB; at the end a read of every item of
 * B's partitions and tenant index shows nothing changed. Plus: the read-only role tries every write
 * → 403. Responses never contain one of B's identifiers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ulid } from 'ulid';
import { createTestTable, type TestTable } from './harness.ts';
import { ADMIN_KEY, createKit, type Kit } from './isolation-kit.ts';
import { systemContext } from '../src/context.ts';
import { totals } from '../src/store/accounting.ts';
import { keys } from '../src/store/keys.ts';
import { routeMapOf } from '../src/lambda/routes.ts';

type Schema = Record<string, any>;
interface Op {
  method: string;
  path: string;
  params: { name: string; in: string; required?: boolean; schema?: Schema }[];
  body?: Schema;
  secured: boolean;
}
interface Fixture {
  tenantId: string;
  adminId: string;
  auditorId: string;
  adminToken: string;
  auditorToken: string;
  apiKey: string;
  keyId: string;
  scopeId: string;
  roleId: string;
  roleName: string;
  groupId: string;
  assignmentId: string;
  email: string;
}

let t: TestTable;
let kit: Kit;
let doc: { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, Schema> } };
let ops: Op[];
let A: Fixture;
let B: Fixture;

const WRITE_COMMANDS = ['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem'];
const writes = () => WRITE_COMMANDS.reduce((s, c) => s + (totals.byCommand[c] ?? 0), 0);
/** POSTs that read (decisions): the read-only role may call them. */
const READ_POSTS = new Set(['POST /v1/tenants/{tenantId}/check', 'POST /v1/tenants/{tenantId}/check-many', 'POST /v1/tenants/{tenantId}/explain']);
const PUBLIC = new Set(['GET /health']);
/**
 * Tenant grants (003) may name a user of ANOTHER tenant, but only with proof that the caller knows
 * whom it adds: the user's e-mail in the body (its `proof` field). So these are attacked with B's
 * user id like every route, and with A's tenant in the path must be exactly 404: without the proof
 * and with a wrong one alike (no oracle), writing nothing. Adding B's user with B's right e-mail
 * is the feature, not a crossing, and is not attempted here (src/identity/grants.test.ts).
 */
const FOREIGN_USER_IS_404: Record<string, { proof?: string }> = {
  'PUT /v1/tenants/{tenantId}/members/{userId}': { proof: 'email' },
  'GET /v1/tenants/{tenantId}/members/{userId}': {},
  'DELETE /v1/tenants/{tenantId}/members/{userId}': {},
};

async function fixture(name: string): Promise<Fixture> {
  const ctx = systemContext();
  const admin = await kit.tenantWithAdmin(name);
  const tenantId = admin.tenantId;
  const scope = { kind: kit.hierarchy.tenantKind, id: tenantId };
  const auditor = await kit.identity.users.create(ctx, tenantId, { email: `auditor-${tenantId.toLowerCase()}@example.com` } as never);
  await kit.access.assignments.create(ctx, tenantId, { userId: auditor.id, roleId: 'tenant-auditor', scope });
  const node = await kit.tenancy.scopes.create(ctx, tenantId, { kind: 'project', name: `${name} project` });
  const roleName = `${name.toLowerCase()}-operator`;
  const page = `page:${name.toLowerCase()}-secret-page`;
  await kit.access.permissions.create(ctx, { key: page });
  const role = await kit.access.roles.create(ctx, tenantId, { name: roleName, permissions: [{ key: 'gatehouse:users:read', effect: 'ALLOW' }, { key: page, effect: 'ALLOW' }] });
  await kit.access.roles.create(ctx, tenantId, { name: `${name.toLowerCase()}-viewer`, permissions: [{ key: 'gatehouse:groups:read', effect: 'ALLOW' }] });
  const group = await kit.access.groups.create(ctx, tenantId, { name: `${name} group`, scope: { kind: 'project', id: node.id } });
  const assignment = await kit.access.assignments.create(ctx, tenantId, { userId: auditor.id, roleId: role.id, scope: { kind: 'project', id: node.id } });
  const key = await kit.auth.apiKeys.create(ctx, tenantId, { name: `${name} key`, roleId: 'tenant-admin' });
  return {
    tenantId,
    adminId: admin.userId,
    auditorId: auditor.id,
    adminToken: admin.token,
    auditorToken: await kit.tokenFor(auditor.id),
    apiKey: key.secret,
    keyId: key.apiKey.id,
    scopeId: node.id,
    roleId: role.id,
    roleName,
    groupId: group.id,
    assignmentId: assignment.id,
    email: `auditor-${tenantId.toLowerCase()}@example.com`,
  };
}

/** The value of a path/query parameter for a tenant's fixture; undefined = no fixture (the suite fails). */
function paramValue(name: string, f: Fixture): string | undefined {
  const fabricated = (tag: string) => `${f === B ? 'B' : 'A'}${ulid()}`.slice(0, 26).replace(/^./, tag);
  const map: Record<string, string> = {
    tenantId: f.tenantId,
    userId: f.auditorId,
    scopeId: f.scopeId,
    roleId: f.roleId,
    groupId: f.groupId,
    assignmentId: f.assignmentId,
    keyId: f.keyId,
    name: f.roleName,
    kind: 'project',
    scopeKind: 'project',
    key: 'devices.setting',
    email: f.email,
    // Entities without a fixture here: an id that exists nowhere still must not be 2xx across tenants.
    id: fabricated('0'),
    itemId: fabricated('0'),
    productId: fabricated('0'),
    licenseId: fabricated('0'),
    subscriptionId: fabricated('0'),
    moduleId: 'billing',
    permission: 'gatehouse:roles:read',
    page: 'dashboard',
    sessionId: fabricated('0'),
    tokenId: fabricated('0'),
    grantId: fabricated('0'),
    policyId: fabricated('0'),
    enterpriseId: fabricated('0'),
    linkedTo: f.scopeId,
  };
  return map[name];
}

/** Identifiers that must never appear in an answer to A. */
const secretsOf = (f: Fixture) => [f.tenantId, f.auditorId, f.adminId, f.scopeId, f.roleId, f.groupId, f.keyId, f.email, `${f.roleName.split('-')[0]}-secret-page`, f.roleName];

function resolve(s: Schema | undefined): Schema | undefined {
  if (!s) return s;
  if (s.$ref) return resolve(doc.components.schemas[s.$ref.split('/').pop()!]);
  if (s.allOf) return Object.assign({}, ...s.allOf.map(resolve));
  return s;
}

/** A sample body with `f`'s ids in every id-like field. */
function sample(s: Schema | undefined, f: Fixture, field = ''): unknown {
  s = resolve(s);
  if (!s) return {};
  if (s.anyOf || s.oneOf) return sample((s.anyOf ?? s.oneOf).find((x: Schema) => resolve(x)?.type !== 'null'), f, field);
  if (s.enum) return s.enum[0];
  if (s.const !== undefined) return s.const;
  const type = Array.isArray(s.type) ? s.type.find((x: string) => x !== 'null') : s.type;
  if (type === 'object' || s.properties) {
    const props: Record<string, Schema> = s.properties ?? {};
    if (/scope|owner/i.test(field) && props.kind && props.id) return { kind: 'project', id: f.scopeId };
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(props)) {
      if ((s.required ?? []).includes(k) || /Id$|^scope$|^tenantId$/.test(k)) out[k] = sample(v, f, k);
    }
    return out;
  }
  if (type === 'array') return (s.minItems ?? 0) > 0 || /Ids$|checks|permissions/.test(field) ? [sample(s.items, f, field.replace(/s$/, ''))] : [];
  if (type === 'integer' || type === 'number') return Math.max(1, s.minimum ?? 1);
  if (type === 'boolean') return false;
  const id = paramValue(field, f);
  if (id !== undefined && /Id$|^id$/.test(field)) return id;
  if (field === 'email') return `x-${ulid().toLowerCase()}@example.com`;
  if (field === 'kind') return 'project';
  if (field === 'permission' || field === 'key') return 'gatehouse:roles:read';
  if (s.format === 'date-time' || /At$|Date$|^at$/.test(field)) return new Date(Date.now() + 86_400_000).toISOString();
  return `x${ulid().slice(-8).toLowerCase()}`;
}

function urlOf(op: Op, pathOwner: (name: string) => Fixture, query: Record<string, string> = {}): string | undefined {
  let missing: string | undefined;
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = paramValue(name, pathOwner(name));
    if (v === undefined) missing = name;
    return encodeURIComponent(v ?? '');
  });
  if (missing) throw new Error(`${op.method} ${op.path}: no isolation fixture for path parameter {${missing}} — add one in paramValue()`);
  const q = new URLSearchParams();
  for (const p of op.params.filter((x) => x.in === 'query' && (x.required || /^(kind|scopeKind|permission|page)$/.test(x.name)))) q.set(p.name, paramValue(p.name, pathOwner(p.name)) ?? 'x');
  for (const [k, v] of Object.entries(query)) q.set(k, v);
  const qs = q.toString();
  return qs ? `${path}?${qs}` : path;
}

async function attempt(credential: string, op: Op, url: string, body?: unknown) {
  const before = writes();
  const sent = op.body ? (body ?? sample(op.body, A)) : undefined;
  // A plausible If-Match, so routes that require one go on to their tenant and existence checks.
  const res = await kit.call(credential, op.method, url, sent, op.method === 'GET' ? {} : { 'if-match': '"1"' });
  const text = await res.text();
  return { status: res.status, text, wrote: writes() - before, request: `${url} ${JSON.stringify(sent ?? '')}` };
}

/** No identifier of B's in the answer, except those the caller itself sent (echoed in `instance` / `detail`). */
const leaks: string[] = [];
function noLeak(op: Op, r: { text: string; request: string; status: number }) {
  for (const s of secretsOf(B)) {
    if (r.request.includes(s)) continue;
    if (r.text.includes(s)) leaks.push(`${op.method} ${op.path} → ${r.status} answered with one of B's identifiers (${s})`);
  }
}

/** Every item of B's partitions and tenant index, for the before/after comparison. */
async function snapshotB(): Promise<string> {
  const T = kit.hierarchy.T;
  const parts = await Promise.all([
    kit.store.queryAll({ pk: keys.tenantPartition(T, B.tenantId).pk }),
    kit.store.queryAll({ index: 'GSI1', pk: keys.tenantEntities(T, B.tenantId).pk }),
    ...[B.adminId, B.auditorId].map((u) => kit.store.queryAll({ pk: keys.userPartition(u).pk })),
    kit.store.queryAll({ pk: keys.nodePartition('PROJECT', B.scopeId).pk }),
    kit.store.queryAll({ pk: keys.rolePartition(B.roleId).pk }),
    kit.store.queryAll({ pk: `GROUP#${B.groupId}` }),
    kit.store.queryAll({ pk: keys.apiKey(B.keyId).PK }),
  ]);
  return JSON.stringify(parts);
}

let before: string;

beforeAll(async () => {
  t = await createTestTable();
  kit = await createKit(t, { full: true });
  A = await fixture('Alpha');
  B = await fixture('Bravo');
  doc = await (await kit.app.request('/openapi.json')).json();
  ops = Object.entries(doc.paths).flatMap(([path, byMethod]) =>
    Object.entries(byMethod).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      params: [...(op.parameters ?? [])],
      body: op.requestBody?.content?.['application/json']?.schema,
      secured: Array.isArray(op.security) && op.security.length > 0,
    })),
  );
  // Warm up the callers (an API key records its first use with a write).
  for (const c of [A.adminToken, A.apiKey, A.auditorToken]) await kit.call(c, 'GET', `/v1/tenants/${A.tenantId}/roles`);
  before = await snapshotB();
}, 120_000);
afterAll(() => t?.drop());

describe('tenant isolation, generated from the OpenAPI document', () => {
  it('covers every operation: each has a declared permission and fixtures for its parameters', () => {
    const routeMap = routeMapOf(kit.app);
    expect(ops.length).toBeGreaterThan(100);
    for (const op of ops) {
      const key = `${op.method} ${op.path}`;
      if (PUBLIC.has(key)) continue;
      expect(op.secured, `${key} is not marked bearer-secured in the OpenAPI document`).toBe(true);
      expect(routeMap[key], `${key} declares no authorize(permission): it would be unauthorized`).toBeDefined();
      for (const p of op.params.filter((x) => x.in === 'path')) expect(paramValue(p.name, B), `${key}: no fixture for {${p.name}}`).toBeDefined();
    }
    for (const key of Object.keys(FOREIGN_USER_IS_404)) expect(ops.some((op) => `${op.method} ${op.path}` === key), `${key} is not served`).toBe(true);
  });

  it("B's ids in the path → 403/404 (B's tenant) and never B's data (A's tenant with B's ids)", async () => {
    const results: string[] = [];
    const violations: string[] = [];
    for (const op of ops) {
      if (PUBLIC.has(`${op.method} ${op.path}`)) continue;
      const key = `${op.method} ${op.path}`;
      // B's tenant (and B's ids) in the path: the tenant check refuses it, strictly 403/404.
      const variants: { url: string; strict: boolean }[] = [{ url: urlOf(op, () => B)!, strict: true }];
      // A's tenant in the path with B's entity ids: 403/404, or an answer about A only (a user id
      // may legitimately be granted into A); never B's data (noLeak), never a change to B (snapshot).
      // Routes naming a foreign user (tenant grants) must be exactly 404 here.
      if (op.path.includes('{tenantId}') && /\{(?!tenantId)\w+\}/.test(op.path)) {
        variants.push({ url: urlOf(op, (n) => (n === 'tenantId' ? A : B))!, strict: false });
      }
      for (const { url, strict } of variants) {
        const foreign = strict ? undefined : FOREIGN_USER_IS_404[key];
        // A route taking a proof field is attacked without it (the sample leaves optional fields
        // out) and with a wrong one: both must be the same 404, and write nothing.
        const proof = foreign?.proof;
        if (proof) expect(resolve(op.body)?.properties?.[proof], `${key}: no body field "${proof}"`).toBeDefined();
        const bodies: unknown[] = op.body ? [sample(op.body, B)] : [undefined];
        if (proof) bodies.push({ ...(sample(op.body, B) as object), [proof]: `wrong-${ulid().toLowerCase()}@example.com` });
        const answers = new Set<string>();
        for (const body of bodies) {
          for (const cred of [A.adminToken, A.apiKey]) {
            const r = await attempt(cred, op, url, body);
            if (proof) answers.add(r.text.replace(/"requestId":"[^"]*"/, ''));
            results.push(`${r.status} ${op.method} ${url}`);
            if (strict && ![403, 404].includes(r.status)) violations.push(`${key} [${url}] → ${r.status} ${r.text.slice(0, 160)}`);
            if (!strict && r.status >= 500) violations.push(`${key} [${url}] → ${r.status}`);
            if (foreign && r.status !== 404) violations.push(`${key} [${r.request}] with B's user id → ${r.status} (expected 404) ${r.text.slice(0, 160)}`);
            if (proof && r.wrote !== 0) violations.push(`${key} [${r.request}] without the right ${proof} wrote ${r.wrote} time(s)`);
            noLeak(op, r);
          }
        }
        if (answers.size > 1) violations.push(`${key} [${url}]: different answers without the right ${proof}:\n${[...answers].join('\n')}`);
      }
    }
    expect(results.length).toBeGreaterThan(ops.length);
    expect(violations, `isolation violations:\n${violations.join('\n')}`).toEqual([]);
  });

  it("B's ids in the body or the query of A's routes → refused or about A only, never B's data", async () => {
    const violations: string[] = [];
    for (const op of ops) {
      if (PUBLIC.has(`${op.method} ${op.path}`) || !op.path.includes('{tenantId}')) continue;
      const url = urlOf(op, () => A)!;
      if (op.body) {
        const r = await attempt(A.adminToken, op, url, sample(op.body, B));
        noLeak(op, r);
        if (r.status < 300) continue; // e.g. a role named like B's: A's own data, checked by the snapshot below
        if (![400, 403, 404, 409, 412, 422].includes(r.status)) violations.push(`${op.method} ${op.path} → ${r.status} ${r.text.slice(0, 160)}`);
      }
      const idQuery = op.params.filter((p) => p.in === 'query' && /Id$|^email$|^name$|^linkedTo$/.test(p.name));
      if (idQuery.length && op.method === 'GET') {
        const q = Object.fromEntries(idQuery.map((p) => [p.name, paramValue(p.name, B) ?? B.tenantId]));
        const r = await attempt(A.adminToken, op, urlOf(op, () => A, q)!);
        noLeak(op, r);
        if (r.status >= 500) violations.push(`${op.method} ${op.path} (B ids in the query) → ${r.status}`);
      }
    }
    expect(violations, `isolation violations:\n${violations.join('\n')}`).toEqual([]);
  });

  it("a cursor from B's listing is refused on A's listings (and on B's for A)", async () => {
    const page = await kit.call(B.adminToken, 'GET', `/v1/tenants/${B.tenantId}/roles?limit=1`);
    const cursor = (await page.json()).cursor as string;
    expect(cursor).toBeTruthy();
    for (const op of ops.filter((o) => o.method === 'GET' && o.params.some((p) => p.name === 'cursor'))) {
      if (!op.path.includes('{tenantId}')) continue;
      for (const owner of [A, B]) {
        const url = urlOf(op, () => owner, { cursor })!;
        const r = await attempt(A.adminToken, op, url);
        expect([400, 403, 404], `${op.method} ${url} → ${r.status} ${r.text.slice(0, 200)}`).toContain(r.status);
        noLeak(op, r);
      }
    }
  });

  it('a read-only role (tenant-auditor) gets 403 on every write, and writes nothing', async () => {
    let n = 0;
    for (const op of ops) {
      const key = `${op.method} ${op.path}`;
      if (op.method === 'GET' || READ_POSTS.has(key) || PUBLIC.has(key)) continue;
      const url = urlOf(op, () => A)!;
      const r = await attempt(A.auditorToken, op, url, op.body ? sample(op.body, A) : undefined);
      expect(r.status, `${key} as tenant-auditor → ${r.status} ${r.text.slice(0, 200)}`).toBe(403);
      expect(r.wrote, `${key} as tenant-auditor wrote`).toBe(0);
      n++;
    }
    expect(n).toBeGreaterThan(40);
  });

  it('no answer carried an identifier of B that the caller did not send', () => {
    expect([...new Set(leaks)], `leaks:\n${[...new Set(leaks)].join('\n')}`).toEqual([]);
  });

  it("nothing of B's changed (a read of B's partitions and tenant index)", async () => {
    expect(await snapshotB()).toBe(before);
    // And B's own callers still work.
    expect((await kit.call(B.adminToken, 'GET', `/v1/tenants/${B.tenantId}/roles`)).status).toBe(200);
    expect((await kit.call(ADMIN_KEY, 'GET', `/v1/tenants/${B.tenantId}`)).status).toBe(200);
  });
});
