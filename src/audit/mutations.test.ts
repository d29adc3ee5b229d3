/**
 * Principle 6, proven over the OpenAPI route list: every mutation route (POST/PUT/PATCH/DELETE in
 * the document) has a recipe here, and for each one
 *  - a successful call writes exactly ONE audit record, in the same TransactWriteItems as the change
 *    (no other write command is sent);
 *  - a failing call writes none;
 *  - when the audit record's write fails, the mutation fails and nothing changed.
 * Other domains add their routes to the app below and a recipe to RECIPES.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { buildTestApp } from '../entitlements/app.test-util.ts';
import { adminCtx, auditOf, facilities, putNode, putTenant, putUser } from '../entitlements/fixtures.test-util.ts';
import type { Hierarchy } from '../tenancy/model.ts';
import { PLATFORM_AUDIT } from './record.ts';

let t: TestTable;
let h: Hierarchy;
let normal: ReturnType<typeof buildTestApp>;
let sabotaged: ReturnType<typeof buildTestApp>;
/** Commands sent through the spied client since the last reset. */
let sent: { name: string; input: Record<string, unknown> }[] = [];
let sabotage = false;
const ctx = adminCtx();

/** A document client whose sends are recorded and, when `sabotage` is on, whose audit puts fail. */
function spy(doc: DynamoDBDocumentClient, breakAudit: boolean): DynamoDBDocumentClient {
  return new Proxy(doc, {
    get(target, prop, recv) {
      if (prop !== 'send') return Reflect.get(target, prop, recv);
      return (cmd: { constructor: { name: string }; input: Record<string, unknown> }) => {
        const name = cmd.constructor.name.replace(/Command$/, '');
        sent.push({ name, input: cmd.input });
        if (breakAudit && sabotage && name === 'TransactWrite') {
          for (const a of cmd.input.TransactItems as { Put?: { Item: { Type?: string }; ConditionExpression?: string } }[]) {
            if (a.Put?.Item.Type === 'AuditRecord') a.Put.ConditionExpression = a.Put.ConditionExpression!.replace('attribute_not_exists', 'attribute_exists');
          }
        }
        return target.send(cmd as never);
      };
    },
  });
}

interface Recipe {
  path: string;
  body?: unknown;
  /** Whose audit partition the record lands in. */
  tenantId: string | 'platform';
  /** A GET whose answer must not change when the mutation fails. */
  probe: string;
  /** A request that fails (default: the same one against an unknown tenant). */
  fail?: { path: string; body?: unknown };
}

type Fixture = { tenantId: string; userId: string; licenseId: string; projectId: string; store: ReturnType<typeof buildTestApp>['store'] };

async function fixture(): Promise<Fixture> {
  const { store, ent } = normal;
  const tenant = await putTenant(store, h);
  const project = await putNode(store, h, tenant.id, 'project');
  const user = await putUser(store, h, tenant.id);
  const lic = await ent.licenses.create(ctx, tenant.id, { productId: 'base', seats: 3, startDate: '2025-01-01', endDate: new Date(Date.now() + 30 * 86400_000).toISOString() });
  return { tenantId: tenant.id, userId: user.id, licenseId: lic.id, projectId: project.id, store };
}

const T = (f: Fixture) => `/v1/tenants/${f.tenantId}`;
const RECIPES: Record<string, (f: Fixture) => Promise<Recipe>> = {
  'POST /v1/products': async () => {
    const id = `p-${ulid()}`;
    return { path: '/v1/products', body: { id, name: 'P' }, tenantId: 'platform', probe: `/v1/products`, fail: { path: '/v1/products', body: { id: 'base', name: 'dup' } } };
  },
  'POST /v1/tenants/{tenantId}/licenses': async (f) => ({
    path: `${T(f)}/licenses`, body: { productId: 'base', seats: 2, startDate: '2025-01-01', endDate: '2030-01-01' }, tenantId: f.tenantId, probe: `${T(f)}/licenses`,
  }),
  'PATCH /v1/tenants/{tenantId}/licenses/{licenseId}': async (f) => ({
    path: `${T(f)}/licenses/${f.licenseId}`, body: { seats: 9 }, tenantId: f.tenantId, probe: `${T(f)}/licenses/${f.licenseId}`,
  }),
  'DELETE /v1/tenants/{tenantId}/licenses/{licenseId}': async (f) => ({ path: `${T(f)}/licenses/${f.licenseId}`, tenantId: f.tenantId, probe: `${T(f)}/licenses` }),
  'PUT /v1/tenants/{tenantId}/licenses/{licenseId}/seats/{userId}': async (f) => ({
    path: `${T(f)}/licenses/${f.licenseId}/seats/${f.userId}`, tenantId: f.tenantId, probe: `${T(f)}/licenses/${f.licenseId}`,
  }),
  'DELETE /v1/tenants/{tenantId}/licenses/{licenseId}/seats/{userId}': async (f) => {
    await normal.ent.licenses.assignSeat(ctx, f.tenantId, f.licenseId, f.userId);
    return { path: `${T(f)}/licenses/${f.licenseId}/seats/${f.userId}`, tenantId: f.tenantId, probe: `${T(f)}/licenses/${f.licenseId}` };
  },
  'POST /v1/tenants/{tenantId}/subscriptions': async (f) => ({
    path: `${T(f)}/subscriptions`, body: { scope: { kind: 'project', id: f.projectId }, moduleId: 'm1', licenseId: f.licenseId }, tenantId: f.tenantId,
    probe: `${T(f)}/subscriptions?scopeKind=project&scopeId=${f.projectId}`,
  }),
  'PATCH /v1/tenants/{tenantId}/subscriptions/{subscriptionId}': async (f) => {
    const s = await normal.ent.subscriptions.create(ctx, f.tenantId, { scope: { kind: 'project', id: f.projectId }, moduleId: 'm2' });
    return { path: `${T(f)}/subscriptions/${s.id}`, body: { tier: 'premium' }, tenantId: f.tenantId, probe: `${T(f)}/subscriptions/${s.id}` };
  },
  'DELETE /v1/tenants/{tenantId}/subscriptions/{subscriptionId}': async (f) => {
    const s = await normal.ent.subscriptions.create(ctx, f.tenantId, { scope: { kind: 'project', id: f.projectId }, moduleId: 'm3' });
    return { path: `${T(f)}/subscriptions/${s.id}`, tenantId: f.tenantId, probe: `${T(f)}/subscriptions/${s.id}` };
  },
  'PUT /v1/tenants/{tenantId}/settings/{kind}/{scopeId}/{key}': async (f) => ({
    path: `${T(f)}/settings/project/${f.projectId}/theme`, body: { value: 'dark', valueType: 'string' }, tenantId: f.tenantId, probe: `${T(f)}/settings/project/${f.projectId}`,
  }),
  'DELETE /v1/tenants/{tenantId}/settings/{kind}/{scopeId}/{key}': async (f) => {
    await normal.ent.settings.put(ctx, f.tenantId, { kind: 'project', id: f.projectId }, 'lang', { value: 'en', valueType: 'string' });
    return { path: `${T(f)}/settings/project/${f.projectId}/lang`, tenantId: f.tenantId, probe: `${T(f)}/settings/project/${f.projectId}` };
  },
  'POST /v1/tenants/{tenantId}/users/{userId}/sessions': async (f) => ({
    path: `${T(f)}/users/${f.userId}/sessions`, body: { ssoProvider: 'okta' }, tenantId: f.tenantId, probe: `${T(f)}/users/${f.userId}/sessions`,
  }),
  'DELETE /v1/tenants/{tenantId}/users/{userId}/sessions/{sessionId}': async (f) => {
    const s = await normal.ent.sessions.createSession(ctx, f.tenantId, f.userId, {});
    return { path: `${T(f)}/users/${f.userId}/sessions/${s.id}`, tenantId: f.tenantId, probe: `${T(f)}/users/${f.userId}/sessions` };
  },
  'POST /v1/tenants/{tenantId}/users/{userId}/sessions/revoke-all': async (f) => {
    await normal.ent.sessions.createSession(ctx, f.tenantId, f.userId, {});
    return { path: `${T(f)}/users/${f.userId}/sessions/revoke-all`, tenantId: f.tenantId, probe: `${T(f)}/users/${f.userId}/sessions` };
  },
  'POST /v1/tenants/{tenantId}/users/{userId}/tokens': async (f) => ({
    path: `${T(f)}/users/${f.userId}/tokens`, body: { tokenType: 'api', name: 'ci' }, tenantId: f.tenantId, probe: `${T(f)}/users/${f.userId}/tokens`,
  }),
  'DELETE /v1/tenants/{tenantId}/users/{userId}/tokens/{tokenId}': async (f) => {
    const tok = await normal.ent.sessions.createToken(ctx, f.tenantId, f.userId, { tokenType: 'refresh' });
    return { path: `${T(f)}/users/${f.userId}/tokens/${tok.id}`, tenantId: f.tenantId, probe: `${T(f)}/users/${f.userId}/tokens` };
  },
};

let mutationRoutes: string[] = [];

beforeAll(async () => {
  t = await createTestTable();
  h = facilities();
  normal = buildTestApp(t, h, { doc: spy(t.doc, false) });
  sabotaged = buildTestApp(t, h, { doc: spy(t.doc, true) });
  await normal.ent.products.create(ctx, { id: 'base', name: 'Base' });
  const doc = (await (await normal.app.request('/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
  mutationRoutes = Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.keys(ops).filter((m) => ['post', 'put', 'patch', 'delete'].includes(m)).map((m) => `${m.toUpperCase()} ${p}`),
  );
});
afterAll(() => t?.drop());

const auditCount = async (tenantId: string) =>
  (tenantId === 'platform' ? await auditOf(normal.store, PLATFORM_AUDIT.T, PLATFORM_AUDIT.tenantId) : await auditOf(normal.store, h.T, tenantId)).length;

describe('every mutation route writes exactly one audit record, atomically (principle 6)', () => {
  it('has a recipe for every mutation route in the OpenAPI document', () => {
    expect(mutationRoutes.length).toBeGreaterThanOrEqual(16);
    expect(mutationRoutes.filter((r) => !RECIPES[r])).toEqual([]);
  });

  for (const route of Object.keys(RECIPES)) {
    const method = route.split(' ')[0];
    it(route, async () => {
      expect(mutationRoutes).toContain(route);

      // Success: one record, in the one TransactWriteItems that made the change.
      let r = await RECIPES[route](await fixture());
      let before = await auditCount(r.tenantId);
      sent = [];
      const ok = await normal.call(method, r.path, r.body);
      expect(ok.status, ok.text).toBeLessThan(300);
      const writes = sent.filter((c) => !['Get', 'Query', 'BatchGet'].includes(c.name));
      expect(writes.map((c) => c.name)).toEqual(['TransactWrite']);
      const items = writes[0].input.TransactItems as { Put?: { Item: Record<string, unknown> } }[];
      const records = items.filter((a) => a.Put?.Item.Type === 'AuditRecord').map((a) => a.Put!.Item);
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({ actorId: 'admin-1', actorType: 'user', userAgent: 'vitest-http', ip: '198.51.100.9', requestId: ok.headers.get('x-request-id') });
      expect(await auditCount(r.tenantId)).toBe(before + 1);

      // Failure: no record anywhere.
      r = await RECIPES[route](await fixture());
      const unknownTenant = ulid();
      const fail = r.fail ?? { path: r.path.replace(/\/v1\/tenants\/[^/]+/, `/v1/tenants/${unknownTenant}`), body: r.body };
      before = await auditCount(r.tenantId);
      const platformBefore = await auditCount('platform');
      const bad = await normal.call(method, fail.path, fail.body);
      expect(bad.status, bad.text).toBeGreaterThanOrEqual(400);
      expect(await auditCount(r.tenantId)).toBe(before);
      expect(await auditCount(unknownTenant)).toBe(0);
      expect(await auditCount('platform')).toBe(platformBefore);

      // A failing audit write fails the mutation, and nothing changed.
      r = await RECIPES[route](await fixture());
      const probeBefore = (await normal.call('GET', r.probe)).json;
      before = await auditCount(r.tenantId);
      sabotage = true;
      try {
        const broken = await sabotaged.call(method, r.path, r.body);
        expect(broken.status, broken.text).toBeGreaterThanOrEqual(400);
      } finally {
        sabotage = false;
      }
      expect(await auditCount(r.tenantId)).toBe(before);
      expect((await normal.call('GET', r.probe)).json).toEqual(probeBefore);
    });
  }
});
