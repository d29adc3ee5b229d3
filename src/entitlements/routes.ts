/** HTTP routes of products, licenses and seats, subscriptions and settings. */
import { createRoute, z } from '@hono/zod-openapi';
import { validation } from '../errors.ts';
import { authorize, ctxOf } from '../http/caller.ts';
import { bearer, errorResponses, json201, jsonBody, jsonResponse, listOf, PaginationQuery } from '../http/common.ts';
import type { RouteModule } from '../http/deps.ts';
import { IfMatchHeader, ifMatchOf, noContent, unprocessable, pathParam, PathTenant, ScopeRefSchema, Timestamp, withEtag } from './http.ts';
import type { LicenseService, ProductService } from './licenses.ts';
import { VALUE_TYPES, type SettingService } from './settings.ts';
import { SUBSCRIPTION_STATUSES, type SubscriptionService } from './subscriptions.ts';

export const PERMISSIONS = {
  licensesRead: 'gatehouse:licenses:read',
  licensesWrite: 'gatehouse:licenses:write',
  subscriptionsRead: 'gatehouse:subscriptions:read',
  subscriptionsWrite: 'gatehouse:subscriptions:write',
  settingsRead: 'gatehouse:settings:read',
  settingsWrite: 'gatehouse:settings:write',
  productsRead: 'gatehouse:products:read',
  platformAdmin: 'gatehouse:platform:admin',
} as const;

const Stamps = { version: z.number().int(), createdAt: Timestamp, updatedAt: Timestamp };

const ProductSchema = z.object({ id: z.string(), name: z.string(), description: z.string().optional(), ...Stamps }).openapi('Product');
const ProductCreate = z.object({
  id: z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/).optional().openapi({ description: 'A readable id (slug); a ULID when absent' }),
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).optional(),
}).strict();

const LicenseSchema = z
  .object({
    id: z.string(),
    tenantId: z.string(),
    productId: z.string().optional(),
    enterpriseId: z.string().optional(),
    name: z.string().optional(),
    seats: z.number().int(),
    seatsUsed: z.number().int(),
    startDate: Timestamp,
    endDate: Timestamp.openapi({ description: 'The instant the license ends' }),
    status: z.enum(['active', 'expired']),
    ...Stamps,
  })
  .openapi('License');
const DateIn = z.string().min(10).max(40).openapi({ example: '2026-12-31', description: 'ISO date (midnight UTC) or date-time' });
const LicenseCreate = z
  .object({
    productId: z.string().min(1).max(128).optional(),
    enterpriseId: z.string().min(1).max(128).optional(),
    name: z.string().trim().min(1).max(200).optional(),
    seats: z.number().int().min(1).max(1_000_000),
    startDate: DateIn,
    endDate: DateIn,
  })
  .strict()
  .openapi('LicenseCreate', { description: 'Exactly one of productId or enterpriseId' });
const LicensePatch = z
  .object({ name: z.string().trim().min(1).max(200).optional(), seats: z.number().int().min(1).max(1_000_000).optional(), startDate: DateIn.optional(), endDate: DateIn.optional() })
  .strict()
  .openapi('LicensePatch');
const SeatSchema = z.object({ licenseId: z.string(), tenantId: z.string(), userId: z.string(), assignedAt: Timestamp, assignedBy: z.string() }).openapi('LicenseSeat');

const SubscriptionSchema = z
  .object({
    id: z.string().openapi({ description: 'Opaque: encodes the scope and the module' }),
    tenantId: z.string(),
    scope: ScopeRefSchema,
    moduleId: z.string(),
    status: z.enum(SUBSCRIPTION_STATUSES),
    tier: z.string(),
    autoRenew: z.boolean(),
    usageQuota: z.record(z.string(), z.number()),
    startDate: Timestamp,
    endDate: Timestamp.optional(),
    licenseId: z.string().optional(),
    createdBy: z.string(),
    ...Stamps,
  })
  .openapi('Subscription');
const Quota = z.record(z.string().max(64), z.number().min(0)).openapi({ example: { apiCalls: 10000 } });
const SubscriptionCreate = z
  .object({
    scope: ScopeRefSchema,
    moduleId: z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/),
    status: z.enum(SUBSCRIPTION_STATUSES).optional(),
    tier: z.string().min(1).max(64).optional(),
    autoRenew: z.boolean().optional(),
    usageQuota: Quota.optional(),
    startDate: DateIn.optional(),
    endDate: DateIn.optional(),
    licenseId: z.string().min(1).max(128).optional(),
  })
  .strict()
  .openapi('SubscriptionCreate');
const SubscriptionPatch = z
  .object({
    status: z.enum(SUBSCRIPTION_STATUSES).optional(),
    tier: z.string().min(1).max(64).optional(),
    autoRenew: z.boolean().optional(),
    usageQuota: Quota.optional(),
    endDate: DateIn.optional(),
    licenseId: z.string().min(1).max(128).optional(),
  })
  .strict()
  .openapi('SubscriptionPatch');

const SettingSchema = z
  .object({
    tenantId: z.string(),
    scope: ScopeRefSchema,
    key: z.string(),
    value: z.unknown(),
    valueType: z.enum(VALUE_TYPES),
    isOverridable: z.boolean(),
    description: z.string().optional(),
    updatedBy: z.string(),
    ...Stamps,
  })
  .openapi('Setting');
const SettingPut = z
  .object({
    value: z.unknown().openapi({ description: 'Must match valueType' }),
    valueType: z.enum(VALUE_TYPES),
    isOverridable: z.boolean().optional().openapi({ description: 'false locks the key for every scope below (default true)' }),
    description: z.string().max(1000).optional(),
  })
  .strict()
  .openapi('SettingPut');
const EffectiveSchema = z
  .object({
    scope: ScopeRefSchema,
    userId: z.string().optional(),
    chain: z.array(ScopeRefSchema),
    settings: z.record(
      z.string(),
      z.object({ key: z.string(), value: z.unknown(), valueType: z.enum(VALUE_TYPES), source: ScopeRefSchema, lockedBy: ScopeRefSchema.optional() }),
    ),
    explain: z
      .record(
        z.string(),
        z.array(z.object({ scope: ScopeRefSchema, value: z.unknown(), valueType: z.enum(VALUE_TYPES), isOverridable: z.boolean(), outcome: z.enum(['applied', 'overridden', 'ignored: locked above']) })),
      )
      .optional(),
  })
  .openapi('EffectiveSettings');

const LicenseParams = PathTenant.extend({ licenseId: pathParam('licenseId') });
const SeatParams = LicenseParams.extend({ userId: pathParam('userId') });
const SubParams = PathTenant.extend({ subscriptionId: pathParam('subscriptionId') });
const ScopeParams = PathTenant.extend({ kind: pathParam('kind', 'Scope kind, the tenant kind, or `user`'), scopeId: pathParam('scopeId') });
const SettingParams = ScopeParams.extend({ key: pathParam('key') });

export interface EntitlementRouteDeps {
  products: ProductService;
  licenses: LicenseService;
  subscriptions: SubscriptionService;
  settings: SettingService;
  /**
   * Serve POST/GET /v1/products from here. The tenancy module's platform catalog serves the same
   * items (with services and assignments): mount only one of the two.
   */
  productRoutes?: boolean;
}

export const entitlementsRoutes = (d: EntitlementRouteDeps): RouteModule => (app) => {
  const tags = ['entitlements'];

  // ---- products (platform catalog) ----
  if (d.productRoutes) registerProducts();
  function registerProducts() {
    app.openapi(
      createRoute({
        method: 'post', path: '/v1/products', tags, security: bearer, summary: 'Add a product to the catalog (platform admin)',
        middleware: [authorize(PERMISSIONS.platformAdmin)] as const,
        request: { body: jsonBody(ProductCreate) },
        responses: { 201: jsonResponse(ProductSchema, 'The product'), ...errorResponses(400, 401, 403, 409) },
      }),
      async (c) => {
        const p = await d.products.create(ctxOf(c), c.req.valid('json'));
        return json201(c, withEtag(c, p), `/v1/products/${encodeURIComponent(p.id)}`);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/products', tags, security: bearer, summary: 'All products (GSI1 ENTITY#PRODUCT)',
        middleware: [authorize(PERMISSIONS.productsRead)] as const,
        request: { query: PaginationQuery },
        responses: { 200: jsonResponse(listOf(ProductSchema), 'A page of products'), ...errorResponses(400, 401, 403) },
      }),
      async (c) => c.json(await d.products.list(c.req.valid('query')), 200),
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/products/{productId}', tags, security: bearer, summary: 'A product',
        middleware: [authorize(PERMISSIONS.productsRead)] as const,
        request: { params: z.object({ productId: pathParam('productId') }) },
        responses: { 200: jsonResponse(ProductSchema, 'The product'), ...errorResponses(401, 403, 404) },
      }),
      async (c) => c.json(withEtag(c, await d.products.get(c.req.valid('param').productId)), 200),
    );
  }

  // ---- licenses ----
  app.openapi(
    createRoute({
      method: 'post', path: '/v1/tenants/{tenantId}/licenses', tags, security: bearer, summary: "Create a tenant's license for a product or an enterprise",
      middleware: [authorize(PERMISSIONS.licensesWrite)] as const,
      request: { params: PathTenant, body: jsonBody(LicenseCreate) },
      responses: { 201: jsonResponse(LicenseSchema, 'The license'), ...errorResponses(400, 401, 403, 404, 409) },
    }),
    async (c) => {
      const { tenantId } = c.req.valid('param');
      const l = await d.licenses.create(ctxOf(c), tenantId, c.req.valid('json'));
      return json201(c, withEtag(c, l), `/v1/tenants/${tenantId}/licenses/${l.id}`);
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/licenses', tags, security: bearer,
      summary: "A tenant's licenses (its partition), or those of one product / enterprise (GSI2)",
      middleware: [authorize(PERMISSIONS.licensesRead)] as const,
      request: {
        params: PathTenant,
        query: PaginationQuery.extend({
          productId: z.string().min(1).max(128).optional().openapi({ param: { name: 'productId', in: 'query' } }),
          enterpriseId: z.string().min(1).max(128).optional().openapi({ param: { name: 'enterpriseId', in: 'query' } }),
        }),
      },
      responses: { 200: jsonResponse(listOf(LicenseSchema, 'LicensePage'), 'A page of licenses'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => {
      const { tenantId } = c.req.valid('param');
      const q = c.req.valid('query');
      const page = q.productId || q.enterpriseId
        ? await d.licenses.ofOwner({ productId: q.productId, enterpriseId: q.productId ? undefined : q.enterpriseId }, { ...q, tenantId })
        : await d.licenses.ofTenant(tenantId, q);
      return c.json(page, 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/licenses/{licenseId}', tags, security: bearer, summary: 'A license',
      middleware: [authorize(PERMISSIONS.licensesRead)] as const,
      request: { params: LicenseParams },
      responses: { 200: jsonResponse(LicenseSchema, 'The license (ETag = version)'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return c.json(withEtag(c, await d.licenses.get(p.tenantId, p.licenseId)), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'patch', path: '/v1/tenants/{tenantId}/licenses/{licenseId}', tags, security: bearer,
      summary: 'Change seats, name or dates (a future end date renews an expired license)',
      middleware: [authorize(PERMISSIONS.licensesWrite)] as const,
      request: { params: LicenseParams, headers: IfMatchHeader, body: jsonBody(LicensePatch) },
      responses: { 200: jsonResponse(LicenseSchema, 'The license'), ...errorResponses(400, 401, 403, 404, 409, 412) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return c.json(withEtag(c, await d.licenses.update(ctxOf(c), p.tenantId, p.licenseId, c.req.valid('json'), ifMatchOf(c))), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'delete', path: '/v1/tenants/{tenantId}/licenses/{licenseId}', tags, security: bearer, summary: 'Delete a license without assigned seats',
      middleware: [authorize(PERMISSIONS.licensesWrite)] as const,
      request: { params: LicenseParams, headers: IfMatchHeader },
      responses: { ...noContent, ...errorResponses(401, 403, 404, 409, 412) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      await d.licenses.delete(ctxOf(c), p.tenantId, p.licenseId, ifMatchOf(c));
      return c.body(null, 204);
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/licenses/{licenseId}/seats', tags, security: bearer, summary: 'The seats of a license',
      middleware: [authorize(PERMISSIONS.licensesRead)] as const,
      request: { params: LicenseParams, query: PaginationQuery },
      responses: { 200: jsonResponse(listOf(SeatSchema), 'A page of seats'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return c.json(await d.licenses.seats(p.tenantId, p.licenseId, c.req.valid('query')), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'put', path: '/v1/tenants/{tenantId}/licenses/{licenseId}/seats/{userId}', tags, security: bearer,
      summary: 'Give a user a seat (409 `seats` when all are taken; 422 `license` when expired)',
      middleware: [authorize(PERMISSIONS.licensesWrite)] as const,
      request: { params: SeatParams },
      responses: { 201: jsonResponse(SeatSchema, 'The seat'), ...errorResponses(400, 401, 403, 404, 409), ...unprocessable },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return json201(c, await d.licenses.assignSeat(ctxOf(c), p.tenantId, p.licenseId, p.userId));
    },
  );
  app.openapi(
    createRoute({
      method: 'delete', path: '/v1/tenants/{tenantId}/licenses/{licenseId}/seats/{userId}', tags, security: bearer, summary: "Release a user's seat",
      middleware: [authorize(PERMISSIONS.licensesWrite)] as const,
      request: { params: SeatParams },
      responses: { ...noContent, ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      await d.licenses.releaseSeat(ctxOf(c), p.tenantId, p.licenseId, p.userId);
      return c.body(null, 204);
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/licenses', tags, security: bearer,
      summary: 'Licenses of a product or an enterprise across tenants (GSI2), or those ending before a date (GSI3, soonest first; platform admin)',
      middleware: [authorize(PERMISSIONS.platformAdmin)] as const,
      request: {
        query: PaginationQuery.extend({
          productId: z.string().min(1).max(128).optional().openapi({ param: { name: 'productId', in: 'query' } }),
          enterpriseId: z.string().min(1).max(128).optional().openapi({ param: { name: 'enterpriseId', in: 'query' } }),
          endingBefore: z.string().min(10).max(40).optional().openapi({ param: { name: 'endingBefore', in: 'query' }, example: '2026-01-01' }),
          status: z.enum(['active', 'expired']).optional().openapi({ param: { name: 'status', in: 'query' }, description: 'With endingBefore (default active)' }),
        }),
      },
      responses: { 200: jsonResponse(listOf(LicenseSchema), 'A page of licenses'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => {
      const q = c.req.valid('query');
      if (q.endingBefore) return c.json(await d.licenses.endingBefore(q.endingBefore, q), 200);
      if (!q.productId && !q.enterpriseId) {
        throw validation('productId', 'Give productId, enterpriseId or endingBefore');
      }
      return c.json(await d.licenses.ofOwner({ productId: q.productId, enterpriseId: q.productId ? undefined : q.enterpriseId }, q), 200);
    },
  );

  // ---- subscriptions ----
  app.openapi(
    createRoute({
      method: 'post', path: '/v1/tenants/{tenantId}/subscriptions', tags, security: bearer, summary: "Subscribe a scope to a module (optionally drawing on a license)",
      middleware: [authorize(PERMISSIONS.subscriptionsWrite)] as const,
      request: { params: PathTenant, body: jsonBody(SubscriptionCreate) },
      responses: { 201: jsonResponse(SubscriptionSchema, 'The subscription'), ...errorResponses(400, 401, 403, 404, 409) },
    }),
    async (c) => {
      const { tenantId } = c.req.valid('param');
      const s = await d.subscriptions.create(ctxOf(c), tenantId, c.req.valid('json'));
      return json201(c, withEtag(c, s), `/v1/tenants/${tenantId}/subscriptions/${s.id}`);
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/subscriptions', tags, security: bearer,
      summary: "A scope's subscriptions (one Query of its partition); status=active drops ended ones",
      middleware: [authorize(PERMISSIONS.subscriptionsRead)] as const,
      request: {
        params: PathTenant,
        query: PaginationQuery.extend({
          scopeKind: z.string().min(1).max(64).openapi({ param: { name: 'scopeKind', in: 'query' } }),
          scopeId: z.string().min(1).max(128).openapi({ param: { name: 'scopeId', in: 'query' } }),
          status: z.enum(SUBSCRIPTION_STATUSES).optional().openapi({ param: { name: 'status', in: 'query' } }),
        }),
      },
      responses: { 200: jsonResponse(listOf(SubscriptionSchema, 'SubscriptionPage'), 'A page of subscriptions'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => {
      const { tenantId } = c.req.valid('param');
      const q = c.req.valid('query');
      return c.json(await d.subscriptions.ofScope(tenantId, { kind: q.scopeKind, id: q.scopeId }, q), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/subscriptions/{subscriptionId}', tags, security: bearer, summary: 'A subscription',
      middleware: [authorize(PERMISSIONS.subscriptionsRead)] as const,
      request: { params: SubParams },
      responses: { 200: jsonResponse(SubscriptionSchema, 'The subscription'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return c.json(withEtag(c, await d.subscriptions.get(p.tenantId, p.subscriptionId)), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'patch', path: '/v1/tenants/{tenantId}/subscriptions/{subscriptionId}', tags, security: bearer, summary: 'Change a subscription',
      middleware: [authorize(PERMISSIONS.subscriptionsWrite)] as const,
      request: { params: SubParams, headers: IfMatchHeader, body: jsonBody(SubscriptionPatch) },
      responses: { 200: jsonResponse(SubscriptionSchema, 'The subscription'), ...errorResponses(400, 401, 403, 404, 409, 412) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return c.json(withEtag(c, await d.subscriptions.update(ctxOf(c), p.tenantId, p.subscriptionId, c.req.valid('json'), ifMatchOf(c))), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'delete', path: '/v1/tenants/{tenantId}/subscriptions/{subscriptionId}', tags, security: bearer, summary: 'Remove a subscription',
      middleware: [authorize(PERMISSIONS.subscriptionsWrite)] as const,
      request: { params: SubParams, headers: IfMatchHeader },
      responses: { ...noContent, ...errorResponses(400, 401, 403, 404, 409, 412) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      await d.subscriptions.delete(ctxOf(c), p.tenantId, p.subscriptionId, ifMatchOf(c));
      return c.body(null, 204);
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/modules/{moduleId}/subscriptions', tags, security: bearer, summary: "The tenant's subscriptions to a module (GSI5)",
      middleware: [authorize(PERMISSIONS.subscriptionsRead)] as const,
      request: { params: PathTenant.extend({ moduleId: pathParam('moduleId') }), query: PaginationQuery },
      responses: { 200: jsonResponse(listOf(SubscriptionSchema), 'A page of subscriptions'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return c.json(await d.subscriptions.ofModule(p.moduleId, { ...c.req.valid('query'), tenantId: p.tenantId }), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/modules/{moduleId}/subscriptions', tags, security: bearer, summary: 'All subscriptions of a module (GSI5; platform admin)',
      middleware: [authorize(PERMISSIONS.platformAdmin)] as const,
      request: { params: z.object({ moduleId: pathParam('moduleId') }), query: PaginationQuery },
      responses: { 200: jsonResponse(listOf(SubscriptionSchema), 'A page of subscriptions'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => c.json(await d.subscriptions.ofModule(c.req.valid('param').moduleId, c.req.valid('query')), 200),
  );

  // ---- settings ----
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/settings/{kind}/{scopeId}', tags, security: bearer, summary: 'The settings stored at a scope (or a user: kind `user`)',
      middleware: [authorize(PERMISSIONS.settingsRead)] as const,
      request: { params: ScopeParams, query: PaginationQuery },
      responses: { 200: jsonResponse(listOf(SettingSchema, 'SettingPage'), 'A page of settings'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return c.json(await d.settings.ofScope(p.tenantId, { kind: p.kind, id: p.scopeId }, c.req.valid('query')), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/settings/{kind}/{scopeId}/{key}', tags, security: bearer, summary: 'One setting stored at a scope',
      middleware: [authorize(PERMISSIONS.settingsRead)] as const,
      request: { params: SettingParams },
      responses: { 200: jsonResponse(SettingSchema, 'The setting'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return c.json(withEtag(c, await d.settings.get(p.tenantId, { kind: p.kind, id: p.scopeId }, p.key)), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'put', path: '/v1/tenants/{tenantId}/settings/{kind}/{scopeId}/{key}', tags, security: bearer,
      summary: 'Create or replace a setting (400 `value` on a type mismatch; 409 `key` when an ancestor locked it)',
      middleware: [authorize(PERMISSIONS.settingsWrite)] as const,
      request: { params: SettingParams, headers: IfMatchHeader, body: jsonBody(SettingPut) },
      responses: { 200: jsonResponse(SettingSchema, 'The setting'), ...errorResponses(400, 401, 403, 404, 409, 412) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      const s = await d.settings.put(ctxOf(c), p.tenantId, { kind: p.kind, id: p.scopeId }, p.key, c.req.valid('json') as never, ifMatchOf(c));
      return c.json(withEtag(c, s), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'delete', path: '/v1/tenants/{tenantId}/settings/{kind}/{scopeId}/{key}', tags, security: bearer, summary: 'Remove a setting from a scope',
      middleware: [authorize(PERMISSIONS.settingsWrite)] as const,
      request: { params: SettingParams, headers: IfMatchHeader },
      responses: { ...noContent, ...errorResponses(400, 401, 403, 404, 409, 412) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      await d.settings.delete(ctxOf(c), p.tenantId, { kind: p.kind, id: p.scopeId }, p.key, ifMatchOf(c));
      return c.body(null, 204);
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/effective-settings/{kind}/{scopeId}', tags, security: bearer,
      summary: 'Effective settings along the scope path (nearest wins unless locked above; ≤ 2 waves); explain=true shows every candidate',
      middleware: [authorize(PERMISSIONS.settingsRead)] as const,
      request: {
        params: ScopeParams,
        query: z.object({
          userId: z.string().min(1).max(128).optional().openapi({ param: { name: 'userId', in: 'query' }, description: "Apply the user's own settings last" }),
          explain: z.enum(['true', 'false']).optional().openapi({ param: { name: 'explain', in: 'query' } }),
        }),
      },
      responses: { 200: jsonResponse(EffectiveSchema, 'The effective settings'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      const q = c.req.valid('query');
      return c.json(await d.settings.effective(p.tenantId, { kind: p.kind, id: p.scopeId }, { userId: q.userId, explain: q.explain === 'true' }), 200);
    },
  );
};
