/**
 * Principle 6 over the WHOLE API (issue 6): every mutation route of the app that createGatehouse
 * builds — read from its OpenAPI document, so a new route fails this suite until it has a recipe
 * below or a reviewed exemption — is performed through HTTP, and for each one:
 *
 *  - success: exactly ONE audit record is written, in the same TransactWriteItems as the change
 *    (no other write command is sent), naming the action, the entity, the caller (actor) and the
 *    response's x-request-id; and exactly one record of that request is stored in the expected
 *    audit partition (the tenant's, or the platform's);
 *  - failure (a 404 / 409 / 412 reached inside the service): nothing is written, so no record;
 *  - the audit write fails (the AuditRecord put of the transaction is made to fail its condition
 *    in DynamoDB): the API answers with an error, nothing is written, and a GET of the entity
 *    answers exactly as before.
 *
 * The default hierarchy (facilities) serves every route but the ones only other hierarchies have;
 * those (platform: catalog assignments on enterprises, workstream tools) run on a platform-hierarchy
 * app over the same table. Multi-transaction cascades and display propagation are proven separately
 * at the end (see CASCADES).
 */
import { randomBytes } from 'node:crypto';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM_AUDIT } from '../src/audit/record.ts';
import { systemContext } from '../src/context.ts';
import { createGatehouse, type Gatehouse } from '../src/gatehouse.ts';
import { createLogger } from '../src/http/logger.ts';
import { withKid } from '../src/identity/secrets.ts';
import { createRouteMatcher, routeMapOf } from '../src/lambda/routes.ts';
import type { Hierarchy } from '../src/tenancy/model.ts';
import { auditPutsOf, describeWrites, isWrite, mutationRoutesOf, recorded, recordingClient, storedAuditRecords, successfulWrites, type Sent } from './audit-kit.ts';
import { createTestTable, type TestTable } from './harness.ts';

const ADMIN_KEY = 'gh_test_admin_key_audit_0123456789abcdef';
const BOOTSTRAP_ACTOR = { actorId: 'bootstrap-admin', actorType: 'apiKey' };
const ctx = systemContext();
const v = (n = 1) => ({ 'if-match': `"${n}"` });
const uid = () => ulid().toLowerCase();

type Caller = 'tenant' | 'platform';
type Json = Record<string, any>;
interface Res {
  status: number;
  headers: Headers;
  text: string;
  json: Json;
}
interface Call {
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Default: the tenant's admin (a JWT user) on tenant routes, the bootstrap key on platform routes. */
  as?: Caller;
}
interface Case extends Call {
  /** What the one audit record must say. `tenantId` = whose partition (default: the path's tenant, else the platform). */
  audit: { action: string; entityType: string; entityId?: string | ((body: Json) => string); tenantId?: string | ((body: Json) => string) };
  /** A GET (as the bootstrap key) whose answer must not change when the audit write fails. */
  probe: string;
  /** The part of the probe's answer to compare (platform-wide listings: the entity's own entries; other tests write there concurrently). */
  select?: (body: Json) => unknown;
  /** A failing call reaching the service (default: the same call by the bootstrap key on an unknown tenant). */
  fail?: Call;
}

interface Fixture {
  tenantId: string;
  tenantName: string;
  /** The tenant's admin (tenant-admin at the tenant): the default caller of tenant routes. */
  adminId: string;
  token: string;
  /** A plain user of the tenant. */
  userId: string;
  /** A node of a top-level kind (facilities: project; platform: enterprise). */
  scopeId: string;
}

interface World {
  h: Hierarchy;
  gh: Gatehouse;
  app: ReturnType<Gatehouse['app']>;
  routes: string[];
  routeOf(method: string, path: string): string | undefined;
  call(as: Caller, method: string, path: string, body?: unknown, headers?: Record<string, string>, token?: string): Promise<Res>;
  fixture(): Promise<Fixture>;
}

type Recipe = (f: Fixture, w: World) => Promise<Case>;

let t: TestTable;
let facilities: World;
let platform: World;
let chaptersRoutes: string[];

async function world(hierarchy: string, bootstrap: boolean): Promise<World> {
  const gh = await createGatehouse({
    clients: { raw: t.raw, doc: recordingClient(t.doc) },
    tableName: t.tableName,
    hierarchy,
    adminApiKey: ADMIN_KEY,
    auth: { devIssuer: true, rateLimit: false },
    identity: { dataKey: withKid(randomBytes(32)), scrypt: { N: 1024, r: 8, p: 1 }, warn: () => {} },
    cursorSecret: 'audit-suite-cursor-secret-0123456789',
    logger: createLogger('silent'),
    bootstrap,
  });
  const app = gh.app();
  const h = gh.hierarchy;
  const match = createRouteMatcher(routeMapOf(app));
  const top = Object.values(h.kinds).find((k) => k.parent === h.tenantKind && !k.links?.length)!;

  async function call(as: Caller, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, token?: string): Promise<Res> {
    const res = await app.request(path, {
      method,
      headers: {
        authorization: `Bearer ${as === 'platform' ? ADMIN_KEY : token}`,
        'user-agent': 'vitest-audit',
        'x-forwarded-for': '198.51.100.9',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let json: Json = {};
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, text, json };
  }

  async function fixture(): Promise<Fixture> {
    const tenantName = `Audit ${ulid()}`;
    const tenant = await gh.tenancy.tenants.create(ctx, { name: tenantName });
    const [admin, user, node] = await Promise.all([
      gh.identity.users.create(ctx, tenant.id, { email: `admin-${uid()}@example.com` }),
      gh.identity.users.create(ctx, tenant.id, { email: `user-${uid()}@example.com` }),
      gh.tenancy.scopes.create(ctx, tenant.id, { kind: top.name, name: `${top.name} ${uid()}` }),
    ]);
    await gh.access.assignments.create(ctx, tenant.id, { userId: admin.id, roleId: 'tenant-admin', scope: { kind: h.tenantKind, id: tenant.id } });
    const { token } = await gh.auth.devIssuer!.issue({ sub: admin.id });
    return { tenantId: tenant.id, tenantName, adminId: admin.id, token, userId: user.id, scopeId: node.id };
  }

  return {
    h,
    gh,
    app,
    routes: await mutationRoutesOf(app),
    routeOf: (method, path) => match(method, path)?.routeKey,
    call,
    fixture,
  };
}

beforeAll(async () => {
  t = await createTestTable();
  facilities = await world('facilities', true);
  // Same table: the permission catalog and the system roles exist already; keys carry the tenant kind.
  platform = await world('platform', false);
  const chapters = await createGatehouse({ clients: { raw: t.raw, doc: t.doc }, tableName: t.tableName, hierarchy: 'chapters', adminApiKey: ADMIN_KEY, auth: { devIssuer: true, rateLimit: false }, logger: createLogger('silent'), bootstrap: false, identity: { dataKey: withKid(randomBytes(32)), warn: () => {} } });
  chaptersRoutes = await mutationRoutesOf(chapters.app());
  // The entitlement recipes license this product.
  await facilities.gh.entitlements.products.create(ctx, { id: 'base', name: 'Base' });
});
afterAll(() => t?.drop());

const T = (f: Fixture) => `/v1/tenants/${f.tenantId}`;
const soon = () => new Date(Date.now() + 30 * 86400_000).toISOString();

// ---------------------------------------------------------------------------------------------
// Exemptions: routes that are not mutations of stored data. Each is called below with a valid
// request and must send no write at all to DynamoDB (so an exemption cannot hide a mutation).
// ---------------------------------------------------------------------------------------------
const EXEMPT: Record<string, { why: string; call: (f: Fixture) => Call }> = {
  'POST /v1/tenants/{tenantId}/check': {
    why: 'a decision of the engine: reads the base table (and its in-memory cache), writes nothing',
    call: (f) => ({ path: `${T(f)}/check`, body: { userId: f.userId, permission: 'gatehouse:users:read', scope: { kind: 'client', id: f.tenantId } } }),
  },
  'POST /v1/tenants/{tenantId}/check-many': {
    why: 'many decisions for one user: reads only',
    call: (f) => ({ path: `${T(f)}/check-many`, body: { userId: f.userId, checks: [{ permission: 'gatehouse:users:read', scope: { kind: 'project', id: f.scopeId } }, { permission: 'gatehouse:roles:write', scope: { kind: 'client', id: f.tenantId } }] } }),
  },
  'POST /v1/tenants/{tenantId}/explain': {
    why: 'explains a decision: reads only',
    call: (f) => ({ path: `${T(f)}/explain`, body: { userId: f.adminId, permission: 'gatehouse:users:read', scope: { kind: 'project', id: f.scopeId } } }),
  },
  'POST /v1/dev/tokens': {
    why: 'development issuer only: signs a JWT in memory, stores nothing',
    call: (f) => ({ path: '/v1/dev/tokens', body: { userId: f.userId }, as: 'platform' }),
  },
};

/*
 * CASCADES — documented departures from "one transaction": each transaction still holds exactly
 * one audit record, proven by the "cascades" tests at the end (docs/patterns-access.md,
 * docs/patterns-tenancy.md):
 *  - DELETE …/roles/{roleId}?cascade=true (global and tenant): the role's transaction, then its
 *    holders (assignments, group roles) in bounded transactions per tenant, each with its own
 *    `role.delete.cascade` record. The recipes below prove the plain delete.
 *  - DELETE …/groups/{groupId} with members: the group and its roles in one transaction, then the
 *    membership edges in bounded transactions, each with its own `group.members.remove` record.
 *  - Renames (PATCH tenant, scope, user, product/service): the audited transaction, then the
 *    denormalized display copies (names on membership / assignment edges) in follow-up
 *    transactions with NO audit record: they carry no information the rename's record lacks.
 * Not routes of their own: the Idempotency-Key middleware stores a replay record of a POST's
 * response (not domain data), and an API key's first use touches its `USAGE` item (last-used time).
 */

// ---------------------------------------------------------------------------------------------
// Recipes: every mutation route of the facilities app.
// ---------------------------------------------------------------------------------------------
/** The entries of a platform-wide listing that carry this name (the listing's page is large enough: this suite creates few). */
const named = (name: string) => (body: Json) => (body.items as Json[]).filter((i) => i.name === name);

const address = { line1: '1 Main Street', city: 'Springfield', country: 'US' };

const RECIPES: Record<string, Recipe> = {
  // ---- auth ----
  'POST /v1/tenants/{tenantId}/api-keys': async (f) => ({
    path: `${T(f)}/api-keys`, body: { name: 'ci', roleId: 'tenant-auditor' },
    audit: { action: 'apikey.create', entityType: 'ApiKey', entityId: (b) => b.id },
    probe: `${T(f)}/api-keys`,
    fail: { path: `${T(f)}/api-keys`, body: { name: 'ci', roleId: `no-such-role-${uid()}` } },
  }),
  'DELETE /v1/tenants/{tenantId}/api-keys/{keyId}': async (f, w) => {
    const { apiKey } = await w.gh.auth.apiKeys.create(ctx, f.tenantId, { name: 'old', roleId: 'tenant-auditor' });
    return {
      path: `${T(f)}/api-keys/${apiKey.id}`, headers: v(),
      audit: { action: 'apikey.revoke', entityType: 'ApiKey', entityId: apiKey.id },
      probe: `${T(f)}/api-keys/${apiKey.id}`,
      fail: { path: `${T(f)}/api-keys/${ulid()}` },
    };
  },

  // ---- tenancy: tenants ----
  'POST /v1/tenants': async (f) => {
    const name = `New ${ulid()}`;
    return {
      path: '/v1/tenants', body: { name }, as: 'platform',
      audit: { action: 'client.create', entityType: 'client', entityId: (b) => b.id, tenantId: (b) => b.id },
      probe: `/v1/tenants?name=${encodeURIComponent(name)}`,
      fail: { path: '/v1/tenants', body: { name: f.tenantName }, as: 'platform' },
    };
  },
  'PATCH /v1/tenants/{tenantId}': async (f) => ({
    path: T(f), body: { name: `Renamed ${ulid()}` }, headers: v(),
    audit: { action: 'client.update', entityType: 'client', entityId: f.tenantId },
    probe: T(f),
    fail: { path: T(f), body: { name: `Renamed ${ulid()}` }, headers: v(7) },
  }),
  'POST /v1/tenants/{tenantId}/suspend': async (f) => ({
    path: `${T(f)}/suspend`, as: 'platform',
    audit: { action: 'client.suspend', entityType: 'client', entityId: f.tenantId },
    probe: T(f),
  }),
  'POST /v1/tenants/{tenantId}/reactivate': async (f, w) => {
    await w.gh.tenancy.tenants.suspend(ctx, f.tenantId);
    return { path: `${T(f)}/reactivate`, as: 'platform', audit: { action: 'client.reactivate', entityType: 'client', entityId: f.tenantId }, probe: T(f) };
  },

  // ---- tenancy: scopes ----
  'POST /v1/tenants/{tenantId}/scopes': async (f) => ({
    path: `${T(f)}/scopes`, body: { kind: 'project', name: 'Second project' },
    audit: { action: 'project.create', entityType: 'project', entityId: (b) => b.id },
    probe: `${T(f)}/scopes?kind=project`,
    fail: { path: `${T(f)}/scopes`, body: { kind: 'building', name: 'Orphan', parentId: ulid() } },
  }),
  'PATCH /v1/tenants/{tenantId}/scopes/{scopeId}': async (f) => ({
    path: `${T(f)}/scopes/${f.scopeId}`, body: { name: 'Renamed project' }, headers: v(),
    audit: { action: 'project.update', entityType: 'project', entityId: f.scopeId },
    probe: `${T(f)}/scopes/${f.scopeId}`,
    fail: { path: `${T(f)}/scopes/${f.scopeId}`, body: { name: 'Renamed project' }, headers: v(5) },
  }),
  'DELETE /v1/tenants/{tenantId}/scopes/{scopeId}': async (f, w) => {
    const building = await w.gh.tenancy.scopes.create(ctx, f.tenantId, { kind: 'building', name: 'B1', parentId: f.scopeId });
    return {
      path: `${T(f)}/scopes/${building.id}`, headers: v(),
      audit: { action: 'building.delete', entityType: 'building', entityId: building.id },
      probe: `${T(f)}/scopes/${building.id}`,
      // The project still has a child: 409.
      fail: { path: `${T(f)}/scopes/${f.scopeId}`, headers: v() },
    };
  },

  // ---- tenancy: child resources of the tenant ----
  'POST /v1/tenants/{tenantId}/addresses': async (f) => ({
    path: `${T(f)}/addresses`, body: address,
    audit: { action: 'address.create', entityType: 'address', entityId: (b) => b.id },
    probe: `${T(f)}/addresses`,
  }),
  'PATCH /v1/tenants/{tenantId}/addresses/{id}': async (f, w) => {
    const a = await w.gh.tenancy.resources.create(ctx, f.tenantId, { kind: w.h.tenantKind, id: f.tenantId }, 'address', address);
    return {
      path: `${T(f)}/addresses/${a.id}`, body: { city: 'Shelbyville' }, headers: v(),
      audit: { action: 'address.update', entityType: 'address', entityId: a.id },
      probe: `${T(f)}/addresses/${a.id}`,
      fail: { path: `${T(f)}/addresses/${ulid()}`, body: { city: 'Shelbyville' }, headers: v() },
    };
  },
  'DELETE /v1/tenants/{tenantId}/addresses/{id}': async (f, w) => {
    const a = await w.gh.tenancy.resources.create(ctx, f.tenantId, { kind: w.h.tenantKind, id: f.tenantId }, 'address', address);
    return {
      path: `${T(f)}/addresses/${a.id}`, headers: v(),
      audit: { action: 'address.delete', entityType: 'address', entityId: a.id },
      probe: `${T(f)}/addresses/${a.id}`,
      fail: { path: `${T(f)}/addresses/${ulid()}`, headers: v() },
    };
  },
  'POST /v1/tenants/{tenantId}/tech-users': async (f) => ({
    path: `${T(f)}/tech-users`, body: { name: 'sync-bot' },
    audit: { action: 'tech_user.create', entityType: 'tech_user', entityId: (b) => b.id },
    probe: `${T(f)}/tech-users`,
  }),
  'PATCH /v1/tenants/{tenantId}/tech-users/{id}': async (f, w) => {
    const u = await w.gh.tenancy.resources.create(ctx, f.tenantId, { kind: w.h.tenantKind, id: f.tenantId }, 'tech_user', { name: 'bot' });
    return {
      path: `${T(f)}/tech-users/${u.id}`, body: { status: 'disabled' }, headers: v(),
      audit: { action: 'tech_user.update', entityType: 'tech_user', entityId: u.id },
      probe: `${T(f)}/tech-users/${u.id}`,
      fail: { path: `${T(f)}/tech-users/${u.id}`, body: { status: 'disabled' }, headers: v(4) },
    };
  },
  'DELETE /v1/tenants/{tenantId}/tech-users/{id}': async (f, w) => {
    const u = await w.gh.tenancy.resources.create(ctx, f.tenantId, { kind: w.h.tenantKind, id: f.tenantId }, 'tech_user', { name: 'bot' });
    return {
      path: `${T(f)}/tech-users/${u.id}`, headers: v(),
      audit: { action: 'tech_user.delete', entityType: 'tech_user', entityId: u.id },
      probe: `${T(f)}/tech-users/${u.id}`,
      fail: { path: `${T(f)}/tech-users/${ulid()}`, headers: v() },
    };
  },

  // ---- tenancy: the platform catalog ----
  ...catalogRecipes('product'),
  ...catalogRecipes('service'),

  // ---- identity: users ----
  'POST /v1/tenants/{tenantId}/users': async (f, w) => {
    const admin = await w.gh.identity.users.get(f.adminId);
    return {
      path: `${T(f)}/users`, body: { email: `new-${uid()}@example.com`, firstName: 'Ada' },
      audit: { action: 'user.create', entityType: 'user', entityId: (b) => b.id },
      probe: `${T(f)}/users`,
      fail: { path: `${T(f)}/users`, body: { email: admin.email } },
    };
  },
  'PATCH /v1/tenants/{tenantId}/users/{userId}': async (f) => ({
    path: `${T(f)}/users/${f.userId}`, body: { title: 'Engineer' }, headers: v(),
    audit: { action: 'user.update', entityType: 'user', entityId: f.userId },
    probe: `${T(f)}/users/${f.userId}`,
    fail: { path: `${T(f)}/users/${f.userId}`, body: { title: 'Engineer' }, headers: v(3) },
  }),
  'DELETE /v1/tenants/{tenantId}/users/{userId}': async (f) => ({
    path: `${T(f)}/users/${f.userId}`, headers: v(),
    audit: { action: 'user.delete', entityType: 'user', entityId: f.userId },
    probe: `${T(f)}/users/${f.userId}`,
    // The admin still holds a role assignment: 409.
    fail: { path: `${T(f)}/users/${f.adminId}`, headers: v() },
  }),
  'PUT /v1/tenants/{tenantId}/users/{userId}/password': async (f) => ({
    path: `${T(f)}/users/${f.userId}/password`, body: { password: 'correct horse battery staple 42' },
    audit: { action: 'user.password.set', entityType: 'user', entityId: f.userId },
    probe: `${T(f)}/users/${f.userId}`,
    fail: { path: `${T(f)}/users/${ulid()}/password`, body: { password: 'correct horse battery staple 42' } },
  }),
  'PUT /v1/tenants/{tenantId}/users/{userId}/mfa': async (f) => ({
    path: `${T(f)}/users/${f.userId}/mfa`, body: { type: 'totp', secret: 'JBSWY3DPEHPK3PXP' },
    audit: { action: 'user.mfa.enable', entityType: 'user', entityId: f.userId },
    probe: `${T(f)}/users/${f.userId}`,
    fail: { path: `${T(f)}/users/${ulid()}/mfa`, body: { type: 'totp', secret: 'JBSWY3DPEHPK3PXP' } },
  }),
  'DELETE /v1/tenants/{tenantId}/users/{userId}/mfa': async (f, w) => {
    await w.gh.identity.users.setMfa(ctx, f.tenantId, f.userId, { type: 'totp', secret: 'JBSWY3DPEHPK3PXP' });
    return {
      path: `${T(f)}/users/${f.userId}/mfa`,
      audit: { action: 'user.mfa.disable', entityType: 'user', entityId: f.userId },
      probe: `${T(f)}/users/${f.userId}`,
      fail: { path: `${T(f)}/users/${ulid()}/mfa` },
    };
  },

  // ---- identity: memberships and tenant grants ----
  'PUT /v1/tenants/{tenantId}/scopes/{scopeId}/members/{userId}': async (f) => ({
    path: `${T(f)}/scopes/${f.scopeId}/members/${f.userId}`,
    audit: { action: 'project.member.add', entityType: 'membership', entityId: `${f.scopeId}:${f.userId}` },
    probe: `${T(f)}/scopes/${f.scopeId}/members`,
    fail: { path: `${T(f)}/scopes/${f.scopeId}/members/${ulid()}` },
  }),
  'DELETE /v1/tenants/{tenantId}/scopes/{scopeId}/members/{userId}': async (f, w) => {
    await w.gh.identity.memberships.add(ctx, f.tenantId, { id: f.scopeId }, f.userId);
    return {
      path: `${T(f)}/scopes/${f.scopeId}/members/${f.userId}`,
      audit: { action: 'project.member.remove', entityType: 'membership', entityId: `${f.scopeId}:${f.userId}` },
      probe: `${T(f)}/scopes/${f.scopeId}/members`,
      // Not a member: 404.
      fail: { path: `${T(f)}/scopes/${f.scopeId}/members/${f.adminId}` },
    };
  },
  'PUT /v1/tenants/{tenantId}/members/{userId}': async (f, w) => {
    // What a grant is for: a user of ANOTHER tenant, named with its e-mail as well as its id.
    const home = await w.gh.tenancy.tenants.create(ctx, { name: `Home ${ulid()}` });
    const email = `guest-${uid()}@example.com`;
    const guest = await w.gh.identity.users.create(ctx, home.id, { email });
    return {
      path: `${T(f)}/members/${guest.id}`, body: { roleIds: ['tenant-auditor'], email: email.toUpperCase() },
      audit: { action: 'grant.create', entityType: 'membership', entityId: (b) => b.id },
      probe: `${T(f)}/members/${guest.id}`,
      // The same user by id alone: 404, nothing written.
      fail: { path: `${T(f)}/members/${guest.id}`, body: { roleIds: ['tenant-auditor'] } },
    };
  },
  'DELETE /v1/tenants/{tenantId}/members/{userId}': async (f, w) => {
    await w.gh.identity.memberships.grant(ctx, f.tenantId, f.userId, { roleIds: ['tenant-auditor'] });
    return {
      path: `${T(f)}/members/${f.userId}`,
      audit: { action: 'grant.delete', entityType: 'membership', entityId: `${f.tenantId}:${f.userId}` },
      probe: `${T(f)}/members/${f.userId}`,
      // No grant: 404.
      fail: { path: `${T(f)}/members/${f.adminId}` },
    };
  },

  // ---- access: permissions, roles ----
  'POST /v1/permissions': async () => {
    const key = `audit:${uid()}:read`;
    return {
      path: '/v1/permissions', body: { key },
      audit: { action: 'permission.create', entityType: 'Permission', entityId: key },
      probe: `/v1/permissions/${encodeURIComponent(key)}`,
      fail: { path: '/v1/permissions', body: { key: 'gatehouse:users:read' } },
    };
  },
  'POST /v1/roles': async () => {
    const name = `global-${uid()}`;
    return {
      path: '/v1/roles', body: { name, permissions: [{ key: 'gatehouse:users:read', effect: 'ALLOW' }] },
      audit: { action: 'role.create', entityType: 'Role', entityId: (b) => b.id },
      probe: '/v1/roles?limit=100', select: named(name),
      fail: { path: '/v1/roles', body: { name: 'tenant-admin', permissions: [] } },
    };
  },
  'PATCH /v1/roles/{roleId}': async (_f, w) => {
    const r = await w.gh.access.roles.create(ctx, undefined, { name: `global-${uid()}`, permissions: [] });
    return {
      path: `/v1/roles/${r.id}`, body: { description: 'changed', permissions: [{ key: 'gatehouse:users:read', effect: 'ALLOW' }] }, headers: v(),
      audit: { action: 'role.update', entityType: 'Role', entityId: r.id },
      probe: `/v1/roles/${r.id}`,
      fail: { path: `/v1/roles/${r.id}`, body: { description: 'changed' }, headers: v(9) },
    };
  },
  'DELETE /v1/roles/{roleId}': async (_f, w) => {
    const r = await w.gh.access.roles.create(ctx, undefined, { name: `global-${uid()}`, permissions: [] });
    return {
      path: `/v1/roles/${r.id}`,
      audit: { action: 'role.delete', entityType: 'Role', entityId: r.id },
      probe: `/v1/roles/${r.id}`,
      fail: { path: `/v1/roles/${ulid()}` },
    };
  },
  'POST /v1/tenants/{tenantId}/roles': async (f) => ({
    path: `${T(f)}/roles`, body: { name: 'operator', permissions: [{ key: 'gatehouse:users:read', effect: 'ALLOW' }] },
    audit: { action: 'role.create', entityType: 'Role', entityId: (b) => b.id },
    probe: `${T(f)}/roles`,
    fail: { path: `${T(f)}/roles`, body: { name: 'operator', permissions: [{ key: 'no:such:permission', effect: 'ALLOW' }] } },
  }),
  'PATCH /v1/tenants/{tenantId}/roles/{roleId}': async (f, w) => {
    const r = await w.gh.access.roles.create(ctx, f.tenantId, { name: 'operator', permissions: [] });
    return {
      path: `${T(f)}/roles/${r.id}`, body: { name: 'operator-2', permissions: [{ key: 'gatehouse:users:read', effect: 'ALLOW' }] }, headers: v(),
      audit: { action: 'role.update', entityType: 'Role', entityId: r.id },
      probe: `${T(f)}/roles/${r.id}`,
      fail: { path: `${T(f)}/roles/${r.id}`, body: { name: 'operator-2' }, headers: v(9) },
    };
  },
  'DELETE /v1/tenants/{tenantId}/roles/{roleId}': async (f, w) => {
    const r = await w.gh.access.roles.create(ctx, f.tenantId, { name: 'operator', permissions: [{ key: 'gatehouse:users:read', effect: 'ALLOW' }] });
    const held = await w.gh.access.roles.create(ctx, f.tenantId, { name: 'held', permissions: [] });
    await w.gh.access.assignments.create(ctx, f.tenantId, { userId: f.userId, roleId: held.id, scope: { kind: 'project', id: f.scopeId } });
    return {
      path: `${T(f)}/roles/${r.id}`,
      audit: { action: 'role.delete', entityType: 'Role', entityId: r.id },
      probe: `${T(f)}/roles/${r.id}`,
      // Still assigned, no cascade: 409.
      fail: { path: `${T(f)}/roles/${held.id}` },
    };
  },

  // ---- access: groups ----
  'POST /v1/tenants/{tenantId}/groups': async (f) => ({
    path: `${T(f)}/groups`, body: { name: 'Operators', scope: { kind: 'project', id: f.scopeId }, roleIds: ['tenant-auditor'] },
    audit: { action: 'group.create', entityType: 'Group', entityId: (b) => b.id },
    probe: `${T(f)}/groups`,
    fail: { path: `${T(f)}/groups`, body: { name: 'Operators', scope: { kind: 'project', id: ulid() } } },
  }),
  'DELETE /v1/tenants/{tenantId}/groups/{groupId}': async (f, w) => {
    const g = await w.gh.access.groups.create(ctx, f.tenantId, { name: 'G', scope: { kind: 'project', id: f.scopeId }, roleIds: ['tenant-auditor'] });
    return {
      path: `${T(f)}/groups/${g.id}`,
      audit: { action: 'group.delete', entityType: 'Group', entityId: g.id },
      probe: `${T(f)}/groups/${g.id}`,
      fail: { path: `${T(f)}/groups/${ulid()}` },
    };
  },
  'PUT /v1/tenants/{tenantId}/groups/{groupId}/members/{userId}': async (f, w) => {
    const g = await w.gh.access.groups.create(ctx, f.tenantId, { name: 'G', scope: { kind: 'project', id: f.scopeId } });
    return {
      path: `${T(f)}/groups/${g.id}/members/${f.userId}`,
      audit: { action: 'group.members.add', entityType: 'Group', entityId: g.id },
      probe: `${T(f)}/groups/${g.id}/members`,
      fail: { path: `${T(f)}/groups/${g.id}/members/${ulid()}` },
    };
  },
  'DELETE /v1/tenants/{tenantId}/groups/{groupId}/members/{userId}': async (f, w) => {
    const g = await w.gh.access.groups.create(ctx, f.tenantId, { name: 'G', scope: { kind: 'project', id: f.scopeId } });
    await w.gh.access.groups.addMember(ctx, f.tenantId, g.id, f.userId);
    return {
      path: `${T(f)}/groups/${g.id}/members/${f.userId}`,
      audit: { action: 'group.members.remove', entityType: 'Group', entityId: g.id },
      probe: `${T(f)}/groups/${g.id}/members`,
      fail: { path: `${T(f)}/groups/${g.id}/members/${f.adminId}` },
    };
  },
  'PUT /v1/tenants/{tenantId}/groups/{groupId}/roles/{roleId}': async (f, w) => {
    const g = await w.gh.access.groups.create(ctx, f.tenantId, { name: 'G', scope: { kind: 'project', id: f.scopeId } });
    return {
      path: `${T(f)}/groups/${g.id}/roles/tenant-auditor`,
      audit: { action: 'group.roles.add', entityType: 'Group', entityId: g.id },
      probe: `${T(f)}/groups/${g.id}/roles`,
      fail: { path: `${T(f)}/groups/${g.id}/roles/no-such-role` },
    };
  },
  'DELETE /v1/tenants/{tenantId}/groups/{groupId}/roles/{roleId}': async (f, w) => {
    const g = await w.gh.access.groups.create(ctx, f.tenantId, { name: 'G', scope: { kind: 'project', id: f.scopeId }, roleIds: ['tenant-auditor'] });
    return {
      path: `${T(f)}/groups/${g.id}/roles/tenant-auditor`,
      audit: { action: 'group.roles.remove', entityType: 'Group', entityId: g.id },
      probe: `${T(f)}/groups/${g.id}/roles`,
      fail: { path: `${T(f)}/groups/${g.id}/roles/admin` },
    };
  },

  // ---- access: assignments, policies ----
  'POST /v1/tenants/{tenantId}/assignments': async (f) => ({
    path: `${T(f)}/assignments`, body: { userId: f.userId, roleId: 'tenant-auditor', scope: { kind: 'project', id: f.scopeId } },
    audit: { action: 'assignment.create', entityType: 'Assignment', entityId: (b) => b.id },
    probe: `${T(f)}/assignments?userId=${f.userId}`,
    // The admin holds tenant-admin at the tenant already: 409.
    fail: { path: `${T(f)}/assignments`, body: { userId: f.adminId, roleId: 'tenant-admin', scope: { kind: 'client', id: f.tenantId } } },
  }),
  'DELETE /v1/tenants/{tenantId}/assignments/{assignmentId}': async (f, w) => {
    const a = await w.gh.access.assignments.create(ctx, f.tenantId, { userId: f.userId, roleId: 'tenant-auditor', scope: { kind: 'project', id: f.scopeId } });
    return {
      path: `${T(f)}/assignments/${a.id}`,
      audit: { action: 'assignment.delete', entityType: 'Assignment', entityId: a.id },
      probe: `${T(f)}/assignments/${a.id}`,
      fail: { path: `${T(f)}/assignments/${a.id.slice(0, -2)}xx` },
    };
  },
  'POST /v1/policies': async () => {
    const name = `policy-${uid()}`;
    return {
      path: '/v1/policies', body: { name, description: 'external' },
      audit: { action: 'policy.create', entityType: 'Policy', entityId: (b) => b.id },
      probe: `/v1/policies?prefix=${name}`,
      fail: { path: '/v1/policies', body: { name: 'has spaces' } },
    };
  },
  'PATCH /v1/policies/{policyId}': async (_f, w) => {
    const p = await w.gh.access.policies.create(ctx, { name: `policy-${uid()}` });
    return {
      path: `/v1/policies/${p.id}`, body: { description: 'changed' }, headers: v(),
      audit: { action: 'policy.update', entityType: 'Policy', entityId: p.id },
      probe: `/v1/policies/${p.id}`,
      fail: { path: `/v1/policies/${p.id}`, body: { description: 'changed' }, headers: v(6) },
    };
  },
  'DELETE /v1/policies/{policyId}': async (_f, w) => {
    const p = await w.gh.access.policies.create(ctx, { name: `policy-${uid()}` });
    return {
      path: `/v1/policies/${p.id}`,
      audit: { action: 'policy.delete', entityType: 'Policy', entityId: p.id },
      probe: `/v1/policies/${p.id}`,
      fail: { path: `/v1/policies/${ulid()}` },
    };
  },

  // ---- entitlements ----
  'POST /v1/tenants/{tenantId}/licenses': async (f) => ({
    path: `${T(f)}/licenses`, body: { productId: 'base', seats: 2, startDate: '2025-01-01', endDate: '2030-01-01' },
    audit: { action: 'license.create', entityType: 'license', entityId: (b) => b.id },
    probe: `${T(f)}/licenses`,
  }),
  'PATCH /v1/tenants/{tenantId}/licenses/{licenseId}': async (f, w) => {
    const lic = await license(f, w);
    return {
      path: `${T(f)}/licenses/${lic}`, body: { seats: 9 },
      audit: { action: 'license.update', entityType: 'license', entityId: lic },
      probe: `${T(f)}/licenses/${lic}`,
      fail: { path: `${T(f)}/licenses/${ulid()}`, body: { seats: 9 } },
    };
  },
  'DELETE /v1/tenants/{tenantId}/licenses/{licenseId}': async (f, w) => {
    const lic = await license(f, w);
    return { path: `${T(f)}/licenses/${lic}`, audit: { action: 'license.delete', entityType: 'license', entityId: lic }, probe: `${T(f)}/licenses`, fail: { path: `${T(f)}/licenses/${ulid()}` } };
  },
  'PUT /v1/tenants/{tenantId}/licenses/{licenseId}/seats/{userId}': async (f, w) => {
    const lic = await license(f, w);
    return {
      path: `${T(f)}/licenses/${lic}/seats/${f.userId}`,
      audit: { action: 'license.seat.assign', entityType: 'license', entityId: lic },
      probe: `${T(f)}/licenses/${lic}`,
      fail: { path: `${T(f)}/licenses/${lic}/seats/${ulid()}` },
    };
  },
  'DELETE /v1/tenants/{tenantId}/licenses/{licenseId}/seats/{userId}': async (f, w) => {
    const lic = await license(f, w);
    await w.gh.entitlements.licenses.assignSeat(ctx, f.tenantId, lic, f.userId);
    return {
      path: `${T(f)}/licenses/${lic}/seats/${f.userId}`,
      audit: { action: 'license.seat.release', entityType: 'license', entityId: lic },
      probe: `${T(f)}/licenses/${lic}`,
      fail: { path: `${T(f)}/licenses/${lic}/seats/${f.adminId}` },
    };
  },
  'POST /v1/tenants/{tenantId}/subscriptions': async (f, w) => {
    const lic = await license(f, w);
    return {
      path: `${T(f)}/subscriptions`, body: { scope: { kind: 'project', id: f.scopeId }, moduleId: 'm1', licenseId: lic },
      audit: { action: 'subscription.create', entityType: 'subscription', entityId: (b) => b.id },
      probe: `${T(f)}/subscriptions?scopeKind=project&scopeId=${f.scopeId}`,
      fail: { path: `${T(f)}/subscriptions`, body: { scope: { kind: 'project', id: ulid() }, moduleId: 'm1', licenseId: lic } },
    };
  },
  'PATCH /v1/tenants/{tenantId}/subscriptions/{subscriptionId}': async (f, w) => {
    const s = await w.gh.entitlements.subscriptions.create(ctx, f.tenantId, { scope: { kind: 'project', id: f.scopeId }, moduleId: 'm2' });
    return {
      path: `${T(f)}/subscriptions/${s.id}`, body: { tier: 'premium' },
      audit: { action: 'subscription.update', entityType: 'subscription', entityId: s.id },
      probe: `${T(f)}/subscriptions/${s.id}`,
      fail: { path: `${T(f)}/subscriptions/${ulid()}`, body: { tier: 'premium' } },
    };
  },
  'DELETE /v1/tenants/{tenantId}/subscriptions/{subscriptionId}': async (f, w) => {
    const s = await w.gh.entitlements.subscriptions.create(ctx, f.tenantId, { scope: { kind: 'project', id: f.scopeId }, moduleId: 'm3' });
    return {
      path: `${T(f)}/subscriptions/${s.id}`,
      audit: { action: 'subscription.delete', entityType: 'subscription', entityId: s.id },
      probe: `${T(f)}/subscriptions/${s.id}`,
      fail: { path: `${T(f)}/subscriptions/${ulid()}` },
    };
  },
  'PUT /v1/tenants/{tenantId}/settings/{kind}/{scopeId}/{key}': async (f) => ({
    path: `${T(f)}/settings/project/${f.scopeId}/theme`, body: { value: 'dark', valueType: 'string' },
    audit: { action: 'setting.create', entityType: 'setting', entityId: `project/${f.scopeId}/theme` },
    probe: `${T(f)}/settings/project/${f.scopeId}`,
    fail: { path: `${T(f)}/settings/project/${ulid()}/theme`, body: { value: 'dark', valueType: 'string' } },
  }),
  'DELETE /v1/tenants/{tenantId}/settings/{kind}/{scopeId}/{key}': async (f, w) => {
    await w.gh.entitlements.settings.put(ctx, f.tenantId, { kind: 'project', id: f.scopeId }, 'lang', { value: 'en', valueType: 'string' });
    return {
      path: `${T(f)}/settings/project/${f.scopeId}/lang`,
      audit: { action: 'setting.delete', entityType: 'setting', entityId: `project/${f.scopeId}/lang` },
      probe: `${T(f)}/settings/project/${f.scopeId}`,
      fail: { path: `${T(f)}/settings/project/${f.scopeId}/no-such-key` },
    };
  },

  // ---- sessions and tokens ----
  'POST /v1/tenants/{tenantId}/users/{userId}/sessions': async (f) => ({
    path: `${T(f)}/users/${f.userId}/sessions`, body: { ssoProvider: 'okta' },
    audit: { action: 'session.create', entityType: 'session', entityId: (b) => b.id },
    probe: `${T(f)}/users/${f.userId}/sessions`,
    fail: { path: `${T(f)}/users/${ulid()}/sessions`, body: { ssoProvider: 'okta' } },
  }),
  'DELETE /v1/tenants/{tenantId}/users/{userId}/sessions/{sessionId}': async (f, w) => {
    const s = await w.gh.entitlements.sessions.createSession(ctx, f.tenantId, f.userId, {});
    return {
      path: `${T(f)}/users/${f.userId}/sessions/${s.id}`,
      audit: { action: 'session.revoke', entityType: 'session', entityId: s.id },
      probe: `${T(f)}/users/${f.userId}/sessions`,
      fail: { path: `${T(f)}/users/${f.userId}/sessions/${ulid()}` },
    };
  },
  'POST /v1/tenants/{tenantId}/users/{userId}/sessions/revoke-all': async (f, w) => {
    await w.gh.entitlements.sessions.createSession(ctx, f.tenantId, f.userId, {});
    return {
      path: `${T(f)}/users/${f.userId}/sessions/revoke-all`,
      audit: { action: 'session.revoke_all', entityType: 'user', entityId: f.userId },
      probe: `${T(f)}/users/${f.userId}/sessions`,
      fail: { path: `${T(f)}/users/${ulid()}/sessions/revoke-all` },
    };
  },
  'POST /v1/tenants/{tenantId}/users/{userId}/tokens': async (f) => ({
    path: `${T(f)}/users/${f.userId}/tokens`, body: { tokenType: 'api', name: 'ci' },
    audit: { action: 'token.create', entityType: 'token', entityId: (b) => b.id },
    probe: `${T(f)}/users/${f.userId}/tokens`,
    fail: { path: `${T(f)}/users/${ulid()}/tokens`, body: { tokenType: 'api', name: 'ci' } },
  }),
  'DELETE /v1/tenants/{tenantId}/users/{userId}/tokens/{tokenId}': async (f, w) => {
    const tok = await w.gh.entitlements.sessions.createToken(ctx, f.tenantId, f.userId, { tokenType: 'refresh' });
    return {
      path: `${T(f)}/users/${f.userId}/tokens/${tok.id}`,
      audit: { action: 'token.revoke', entityType: 'token', entityId: tok.id },
      probe: `${T(f)}/users/${f.userId}/tokens`,
      fail: { path: `${T(f)}/users/${f.userId}/tokens/${ulid()}` },
    };
  },
};

async function license(f: Fixture, w: World): Promise<string> {
  return (await w.gh.entitlements.licenses.create(ctx, f.tenantId, { productId: 'base', seats: 3, startDate: '2025-01-01', endDate: soon() })).id;
}

function catalogRecipes(type: 'product' | 'service'): Record<string, Recipe> {
  const base = `/v1/${type}s`;
  const make = (w: World) => w.gh.tenancy.catalog.create(ctx, type, { name: `${type} ${uid()}` });
  return {
    [`POST ${base}`]: async () => {
      const name = `${type} ${uid()}`;
      return {
        path: base, body: { name, sku: 'SKU-1' },
        audit: { action: `${type}.create`, entityType: type, entityId: (b) => b.id },
        probe: `${base}?limit=100`, select: named(name),
        fail: { path: base, body: { name: '' } },
      };
    },
    [`PATCH ${base}/{itemId}`]: async (_f, w) => {
      const item = await make(w);
      return {
        path: `${base}/${item.id}`, body: { description: 'changed' }, headers: v(),
        audit: { action: `${type}.update`, entityType: type, entityId: item.id },
        probe: `${base}/${item.id}`,
        fail: { path: `${base}/${item.id}`, body: { description: 'changed' }, headers: v(8) },
      };
    },
    [`DELETE ${base}/{itemId}`]: async (_f, w) => {
      const item = await make(w);
      return {
        path: `${base}/${item.id}`, headers: v(),
        audit: { action: `${type}.delete`, entityType: type, entityId: item.id },
        probe: `${base}/${item.id}`,
        fail: { path: `${base}/${ulid()}`, headers: v() },
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Recipes of routes only other hierarchies serve (run on the platform-hierarchy app).
// ---------------------------------------------------------------------------------------------
async function workstream(f: Fixture, w: World) {
  return w.gh.tenancy.scopes.create(ctx, f.tenantId, { kind: 'workstream', name: `ws ${uid()}`, attributes: { enterpriseId: f.scopeId } });
}

const catalogAssignment = (type: 'product' | 'service'): Record<string, Recipe> => ({
  [`PUT /v1/tenants/{tenantId}/scopes/{scopeId}/${type}s/{itemId}`]: async (f, w) => {
    const item = await w.gh.tenancy.catalog.create(ctx, type, { name: `${type} ${uid()}` });
    return {
      path: `${T(f)}/scopes/${f.scopeId}/${type}s/${item.id}`,
      audit: { action: `enterprise.${type}.assign`, entityType: 'enterprise', entityId: f.scopeId },
      probe: `${T(f)}/scopes/${f.scopeId}/catalog`,
      fail: { path: `${T(f)}/scopes/${f.scopeId}/${type}s/${ulid()}` },
    };
  },
  [`DELETE /v1/tenants/{tenantId}/scopes/{scopeId}/${type}s/{itemId}`]: async (f, w) => {
    const item = await w.gh.tenancy.catalog.create(ctx, type, { name: `${type} ${uid()}` });
    await w.gh.tenancy.catalog.assign(ctx, f.tenantId, f.scopeId, type, item.id);
    return {
      path: `${T(f)}/scopes/${f.scopeId}/${type}s/${item.id}`,
      audit: { action: `enterprise.${type}.unassign`, entityType: 'enterprise', entityId: f.scopeId },
      probe: `${T(f)}/scopes/${f.scopeId}/catalog`,
      // Not assigned: 404.
      fail: { path: `${T(f)}/scopes/${f.scopeId}/${type}s/${ulid()}` },
    };
  },
});

const OTHER_HIERARCHY_RECIPES: Record<string, Recipe> = {
  ...catalogAssignment('product'),
  ...catalogAssignment('service'),
  'POST /v1/tenants/{tenantId}/scopes/{scopeId}/tools': async (f, w) => {
    const ws = await workstream(f, w);
    return {
      path: `${T(f)}/scopes/${ws.id}/tools`, body: { name: 'ci', config: { retries: 3, tags: ['a'] } },
      audit: { action: 'tool.create', entityType: 'tool', entityId: (b) => b.id },
      probe: `${T(f)}/scopes/${ws.id}/tools`,
      fail: { path: `${T(f)}/scopes/${ulid()}/tools`, body: { name: 'ci' } },
    };
  },
  'PATCH /v1/tenants/{tenantId}/scopes/{scopeId}/tools/{id}': async (f, w) => {
    const ws = await workstream(f, w);
    const tool = await w.gh.tenancy.resources.create(ctx, f.tenantId, { kind: 'workstream', id: ws.id }, 'tool', { name: 'ci' });
    return {
      path: `${T(f)}/scopes/${ws.id}/tools/${tool.id}`, body: { description: 'changed' }, headers: v(),
      audit: { action: 'tool.update', entityType: 'tool', entityId: tool.id },
      probe: `${T(f)}/scopes/${ws.id}/tools/${tool.id}`,
      fail: { path: `${T(f)}/scopes/${ws.id}/tools/${tool.id}`, body: { description: 'changed' }, headers: v(4) },
    };
  },
  'DELETE /v1/tenants/{tenantId}/scopes/{scopeId}/tools/{id}': async (f, w) => {
    const ws = await workstream(f, w);
    const tool = await w.gh.tenancy.resources.create(ctx, f.tenantId, { kind: 'workstream', id: ws.id }, 'tool', { name: 'ci' });
    return {
      path: `${T(f)}/scopes/${ws.id}/tools/${tool.id}`, headers: v(),
      audit: { action: 'tool.delete', entityType: 'tool', entityId: tool.id },
      probe: `${T(f)}/scopes/${ws.id}/tools/${tool.id}`,
      fail: { path: `${T(f)}/scopes/${ws.id}/tools/${ulid()}`, headers: v() },
    };
  },
};

// ---------------------------------------------------------------------------------------------
// The proof, per route.
// ---------------------------------------------------------------------------------------------
const callerOf = (c: Call): Caller => c.as ?? (c.path.startsWith('/v1/tenants/') ? 'tenant' : 'platform');
const send = (w: World, f: Fixture, method: string, c: Call) => w.call(callerOf(c), method, c.path, c.body, c.headers, f.token);

/** A GET as the bootstrap key, without the per-request fields of an error answer. */
async function probe(w: World, c: Case) {
  const r = await w.call('platform', 'GET', c.probe);
  const { requestId: _r, ...body } = r.json;
  return { status: r.status, body: c.select && r.status === 200 ? c.select(body) : body };
}

async function prove(w: World, route: string, recipe: Recipe, x: typeof expect) {
  const method = route.split(' ')[0];

  // 1. Success: one audit record, in the one TransactWriteItems that made the change.
  const success = async () => {
    const f = await w.fixture();
    const c = await recipe(f, w);
    x(w.routeOf(method, c.path), 'the recipe calls another route').toBe(route);
    const before = await probe(w, c);
    const { result: res, sent } = await recorded(() => send(w, f, method, c));
    x(res.status, res.text).toBeLessThan(300);
    // The probe sees the change (so "unchanged" in step 3 means something).
    x(await probe(w, c), `the probe ${c.probe} does not show the change`).not.toEqual(before);
    const writes = sent.filter(isWrite);
    x(writes.map((s) => s.name), `writes: ${describeWrites(sent)}`).toEqual(['TransactWrite']);
    x(writes[0].ok).toBe(true);
    const records = auditPutsOf(writes[0]);
    x(records, `audit records in ${describeWrites(sent)}`).toHaveLength(1);
    const requestId = res.headers.get('x-request-id');
    x(requestId).toBeTruthy();
    const entityId = typeof c.audit.entityId === 'function' ? c.audit.entityId(res.json) : c.audit.entityId;
    x(entityId, 'the recipe names the entity').toBeTruthy();
    x(records[0]).toMatchObject({
      action: c.audit.action,
      entityType: c.audit.entityType,
      entityId,
      requestId,
      ...(callerOf(c) === 'tenant' ? { actorId: f.adminId, actorType: 'user' } : BOOTSTRAP_ACTOR),
      ip: '198.51.100.9',
      userAgent: 'vitest-audit',
      status: 'success',
    });
    const tenantId = typeof c.audit.tenantId === 'function' ? c.audit.tenantId(res.json) : (c.audit.tenantId ?? (c.path.startsWith('/v1/tenants/') ? f.tenantId : PLATFORM_AUDIT.tenantId));
    const T = tenantId === PLATFORM_AUDIT.tenantId ? PLATFORM_AUDIT.T : w.h.T;
    x(records[0].tenantId).toBe(tenantId);
    const stored = await storedAuditRecords(w.gh.store, T, tenantId, requestId!);
    x(stored.map((r) => r.id)).toEqual([records[0].id]);
  };

  // 2. Failure inside the service: nothing written, so no audit record.
  const failure = async () => {
    const f = await w.fixture();
    const c = await recipe(f, w);
    const fail: Call = c.fail ?? { ...c, as: 'platform', path: c.path.replace(/^\/v1\/tenants\/[^/]+/, `/v1/tenants/${ulid()}`) };
    x(w.routeOf(method, fail.path.split('?')[0]), 'the failing call is another route').toBe(route);
    const { result: bad, sent } = await recorded(() => send(w, f, method, fail));
    x(bad.status, bad.text).toBeGreaterThanOrEqual(400);
    x(bad.status, `${bad.text}: a failure must reach the service, not the authorizer`).not.toBe(403);
    x(describeWrites(successfulWrites(sent)), 'a failed call wrote').toBe('');
  };

  // 3. The audit write fails: the mutation fails and nothing changed.
  const brokenAudit = async () => {
    const f = await w.fixture();
    const c = await recipe(f, w);
    const before = await probe(w, c);
    const { result: broken, sent } = await recorded(() => send(w, f, method, c), { breakAudit: true });
    x(broken.status, broken.text).toBeGreaterThanOrEqual(400);
    const attempts = sent.filter((s) => s.name === 'TransactWrite' && auditPutsOf(s).length > 0);
    x(attempts.length, `the audited transaction was sent: ${describeWrites(sent)}`).toBeGreaterThan(0);
    x(attempts.every((s) => s.ok === false && s.error === 'TransactionCanceledException')).toBe(true);
    x(describeWrites(successfulWrites(sent)), 'a mutation whose audit write failed wrote').toBe('');
    x(await probe(w, c)).toEqual(before);
  };
  // Each step has its own fixture: they run in parallel (every step is settled before the test ends).
  const outcomes = await Promise.allSettled([success(), failure(), brokenAudit()]);
  for (const o of outcomes) if (o.status === 'rejected') throw o.reason;
}

describe('every mutation route writes exactly one audit record, atomically (principle 6, issue 6)', () => {
  it('every mutation route of the OpenAPI document has a recipe or a reviewed exemption (and every recipe a route)', () => {
    const routes = facilities.routes;
    expect(routes.length).toBeGreaterThanOrEqual(68);
    expect(routes.filter((r) => !RECIPES[r] && !EXEMPT[r]), 'mutation routes without a recipe: add one to RECIPES').toEqual([]);
    expect(Object.keys({ ...RECIPES, ...EXEMPT }).filter((r) => !routes.includes(r)), 'recipes of routes that no longer exist').toEqual([]);
  });

  it('the other shipped hierarchies add only routes with a recipe here', () => {
    const extra = (routes: string[]) => routes.filter((r) => !facilities.routes.includes(r));
    expect(extra(platform.routes).filter((r) => !OTHER_HIERARCHY_RECIPES[r])).toEqual([]);
    expect(extra(chaptersRoutes).filter((r) => !OTHER_HIERARCHY_RECIPES[r])).toEqual([]);
    expect(Object.keys(OTHER_HIERARCHY_RECIPES).filter((r) => !platform.routes.includes(r))).toEqual([]);
  });

  describe.concurrent('facilities hierarchy', () => {
    for (const [route, recipe] of Object.entries(RECIPES)) it(route, ({ expect: x }) => prove(facilities, route, recipe, x));
  });

  describe.concurrent('platform hierarchy (routes the default hierarchy does not have)', () => {
    for (const [route, recipe] of Object.entries(OTHER_HIERARCHY_RECIPES)) it(route, ({ expect: x }) => prove(platform, route, recipe, x));
  });

  describe.concurrent('exempt routes write nothing', () => {
    for (const [route, e] of Object.entries(EXEMPT)) {
      it(`${route} (${e.why})`, async ({ expect: x }) => {
        const f = await facilities.fixture();
        const c = e.call(f);
        x(facilities.routeOf(route.split(' ')[0], c.path)).toBe(route);
        const { result: res, sent } = await recorded(() => send(facilities, f, route.split(' ')[0], c));
        x(res.status, res.text).toBeLessThan(300);
        x(describeWrites(sent)).toBe('');
      });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// CASCADES (see the comment above EXEMPT): several transactions, each with exactly one record;
// display propagation after a rename carries none.
// ---------------------------------------------------------------------------------------------
function eachTransactionAuditedOnce(x: typeof expect, sent: Sent[], n: number) {
  const writes = successfulWrites(sent);
  x(writes.map((s) => s.name), describeWrites(sent)).toEqual(Array(n).fill('TransactWrite'));
  for (const w of writes) x(auditPutsOf(w), describeWrites(sent)).toHaveLength(1);
  return writes.map((w) => auditPutsOf(w)[0]);
}

describe.concurrent('cascades: one audit record per transaction', () => {
  it('DELETE a tenant role with cascade=true: the role, then its holders, each transaction audited once', async ({ expect: x }) => {
    const w = facilities;
    const f = await w.fixture();
    const role = await w.gh.access.roles.create(ctx, f.tenantId, { name: 'held', permissions: [] });
    await w.gh.access.assignments.create(ctx, f.tenantId, { userId: f.userId, roleId: role.id, scope: { kind: 'project', id: f.scopeId } });
    const g = await w.gh.access.groups.create(ctx, f.tenantId, { name: 'G', scope: { kind: 'project', id: f.scopeId }, roleIds: [role.id] });
    const { result: res, sent } = await recorded(() => w.call('tenant', 'DELETE', `${T(f)}/roles/${role.id}?cascade=true`, undefined, {}, f.token));
    x(res.status, res.text).toBe(200);
    x(res.json).toMatchObject({ assignments: 1, groups: 1 });
    const records = eachTransactionAuditedOnce(x, sent, 2);
    x(records.map((r) => r.action)).toEqual(['role.delete', 'role.delete.cascade']);
    x(records[1].related).toMatchObject({ groups: [g.id] });

    // The audit write of the role's transaction fails: nothing is deleted, holders included.
    const role2 = await w.gh.access.roles.create(ctx, f.tenantId, { name: 'held-2', permissions: [] });
    await w.gh.access.assignments.create(ctx, f.tenantId, { userId: f.userId, roleId: role2.id, scope: { kind: 'project', id: f.scopeId } });
    const broken = await recorded(() => w.call('tenant', 'DELETE', `${T(f)}/roles/${role2.id}?cascade=true`, undefined, {}, f.token), { breakAudit: true });
    x(broken.result.status).toBeGreaterThanOrEqual(400);
    x(describeWrites(successfulWrites(broken.sent))).toBe('');
    x((await w.gh.access.roles.holders(role2.id)).assignments).toHaveLength(1);
  });

  it('DELETE a group with members: the group, then its membership edges, each transaction audited once', async ({ expect: x }) => {
    const w = facilities;
    const f = await w.fixture();
    const g = await w.gh.access.groups.create(ctx, f.tenantId, { name: 'G', scope: { kind: 'project', id: f.scopeId }, roleIds: ['tenant-auditor'] });
    await w.gh.access.groups.addMember(ctx, f.tenantId, g.id, f.userId);
    await w.gh.access.groups.addMember(ctx, f.tenantId, g.id, f.adminId);
    const { result: res, sent } = await recorded(() => w.call('tenant', 'DELETE', `${T(f)}/groups/${g.id}`, undefined, {}, f.token));
    x(res.status, res.text).toBe(200);
    const records = eachTransactionAuditedOnce(x, sent, 2);
    x(records.map((r) => r.action)).toEqual(['group.delete', 'group.members.remove']);
    x((records[1].related as { userIds: string[] }).userIds.sort()).toEqual([f.userId, f.adminId].sort());
  });

  it('a rename: the audited transaction, then display copies on edges in transactions without a record', async ({ expect: x }) => {
    const w = facilities;
    const f = await w.fixture();
    await w.gh.identity.memberships.add(ctx, f.tenantId, { id: f.scopeId }, f.userId);
    await w.gh.identity.memberships.grant(ctx, f.tenantId, f.userId, { roleIds: [] });
    for (const c of [
      { path: T(f), body: { name: `Renamed ${ulid()}` }, action: 'client.update' },
      { path: `${T(f)}/scopes/${f.scopeId}`, body: { name: 'Renamed project' }, action: 'project.update' },
      { path: `${T(f)}/users/${f.userId}`, body: { firstName: 'Renamed' }, action: 'user.update' },
    ]) {
      const cur = await w.call('platform', 'GET', c.path);
      const { result: res, sent } = await recorded(() => w.call('tenant', 'PATCH', c.path, c.body, { 'if-match': cur.headers.get('etag')! }, f.token));
      x(res.status, res.text).toBe(200);
      const [first, ...rest] = successfulWrites(sent);
      x(auditPutsOf(first).map((r) => r.action)).toEqual([c.action]);
      x(rest.length, `${c.action}: the rename reached its copies`).toBeGreaterThan(0);
      for (const s of rest) {
        x(auditPutsOf(s)).toEqual([]);
        // Only updates of existing edges (display fields), never a new item or a deletion.
        x(s.name === 'Update' || (s.name === 'TransactWrite' && (s.input.TransactItems as object[]).every((a) => Object.keys(a)[0] === 'Update')), describeWrites(sent)).toBe(true);
      }
    }
  });
});
