/**
 * HTTP routes of the tenancy domain (thin: parse, authorize, call the service, shape). The path's
 * tenantId always wins: an entity of another tenant is 404.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { ctxOf, authorize } from '../http/caller.ts';
import { bearer, errorResponses, json201, jsonBody, jsonResponse, listOf, PaginationQuery } from '../http/common.ts';
import type { AppHono, RouteModule } from '../http/deps.ts';
import { notFound, validation } from '../errors.ts';
import { RESOURCE_TYPES } from './hierarchy.ts';
import { IfMatchHeader, ifMatch, KindQuery, OptionalIfMatchHeader, pathParam, precondition, ScopeParams, setEtag, TenantParams } from './http.ts';
import type { TenancyServices } from './index.ts';
import type { ResourceType, ScopeRef } from './model.ts';
import {
  AddressSchema,
  CatalogAssignmentSchema,
  CreateAddressInput,
  CreateCatalogItemInput,
  CreateScopeInput,
  CreateTechUserInput,
  CreateTenantInput,
  CreateToolInput,
  ProductSchema,
  ScopeSchema,
  ServiceSchema,
  TechUserSchema,
  TenantSchema,
  ToolSchema,
  UpdateAddressInput,
  UpdateCatalogItemInput,
  UpdateScopeInput,
  UpdateTechUserInput,
  UpdateTenantInput,
  UpdateToolInput,
} from './schema.ts';

export const PERMISSIONS = {
  platformAdmin: 'gatehouse:platform:admin',
  tenantsRead: 'gatehouse:tenants:read',
  tenantsWrite: 'gatehouse:tenants:write',
  scopesRead: 'gatehouse:scopes:read',
  scopesWrite: 'gatehouse:scopes:write',
  catalogRead: 'gatehouse:catalog:read',
  catalogWrite: 'gatehouse:catalog:write',
} as const;

const TenantList = listOf(TenantSchema, 'TenantList');
const ScopeList = listOf(ScopeSchema, 'ScopeList');
const mw = (permission: string) => [authorize(permission)];
const t = ['tenancy'];

const ScopeListQuery = PaginationQuery.extend({
  kind: z.string().min(1).max(32).optional().openapi({ param: { name: 'kind', in: 'query' }, description: 'Nodes of this kind (GSI1)' }),
  linkedTo: z.string().min(1).max(64).optional().openapi({ param: { name: 'linkedTo', in: 'query' }, description: 'Nodes of `kind` linked to this node id (GSI2), e.g. workstreams of an enterprise' }),
  code: z.string().min(1).max(64).optional().openapi({ param: { name: 'code', in: 'query' }, description: 'The node with this unique code (one GetItem)' }),
  sort: z.enum(['tree', 'recent']).optional().openapi({ param: { name: 'sort', in: 'query' }, description: '`recent`: newest first (GSI4); default: tree order (GSI5)' }),
  since: z.iso.datetime({ offset: true }).optional().openapi({ param: { name: 'since', in: 'query' }, description: 'With sort=recent: created at or after' }),
});

const OverviewSchema = z
  .object({
    tenant: TenantSchema.optional(),
    addresses: z.array(AddressSchema),
    techUsers: z.array(TechUserSchema),
    licenses: z.array(z.record(z.string(), z.unknown())),
    children: z.record(z.string(), z.array(ScopeSchema)).openapi({ description: 'Top-level nodes by kind' }),
    cursor: z.string().nullable(),
  })
  .openapi('TenantOverview');

const EntityList = listOf(
  z.object({ type: z.string(), id: z.string(), kind: z.string().optional(), name: z.string().optional(), email: z.string().optional() }).openapi('EntityRef'),
  'EntityList',
);

const ScopeCatalogSchema = z
  .object({ scope: ScopeSchema.optional(), products: z.array(CatalogAssignmentSchema), services: z.array(CatalogAssignmentSchema), cursor: z.string().nullable() })
  .openapi('ScopeCatalog');

const strip = (it: Record<string, unknown>) => {
  const { PK: _a, SK: _b, GSI2PK: _c, GSI2SK: _d, GSI3PK: _e, GSI3SK: _f, Type: _g, ...rest } = it;
  return rest;
};

export interface TenancyRouteOptions {
  /**
   * Register the platform catalog routes (/v1/products, /v1/services). The entitlements module
   * also serves POST/GET /v1/products over the same items: mount only one of the two sets.
   */
  platformCatalog?: boolean;
}

export function tenancyRoutes(s: TenancyServices, o: TenancyRouteOptions = {}): RouteModule {
  const h = s.hierarchy;
  return (app: AppHono) => {
    // ---- tenants ----
    app.openapi(
      createRoute({
        method: 'post', path: '/v1/tenants', tags: t, security: bearer, middleware: mw(PERMISSIONS.platformAdmin),
        summary: `Create a tenant (${h.tenantKind}); the name is unique`,
        request: { body: jsonBody(CreateTenantInput) },
        responses: { 201: jsonResponse(TenantSchema, 'Created'), ...errorResponses(400, 401, 403, 409, 415) },
      }),
      async (c) => {
        const tenant = await s.tenants.create(ctxOf(c), c.req.valid('json'));
        setEtag(c, tenant.version);
        return json201(c, tenant, `/v1/tenants/${tenant.id}`);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants', tags: t, security: bearer, middleware: mw(PERMISSIONS.platformAdmin),
        summary: 'All tenants (GSI1), or the one with ?name= (one GetItem)',
        request: { query: PaginationQuery.extend({ name: z.string().min(1).max(200).optional().openapi({ param: { name: 'name', in: 'query' } }) }) },
        responses: { 200: jsonResponse(TenantList, 'A page of tenants'), ...errorResponses(400, 401, 403) },
      }),
      async (c) => {
        const q = c.req.valid('query');
        if (q.name !== undefined) {
          const one = await s.tenants.getByName(q.name);
          return c.json({ items: one ? [one] : [], cursor: null }, 200);
        }
        return c.json(await s.tenants.list(q), 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}', tags: t, security: bearer, middleware: mw(PERMISSIONS.tenantsRead),
        summary: 'A tenant (one GetItem)',
        request: { params: TenantParams },
        responses: { 200: jsonResponse(TenantSchema, 'The tenant; ETag is its version'), ...errorResponses(401, 403, 404) },
      }),
      async (c) => {
        const tenant = await s.tenants.get(c.req.valid('param').tenantId);
        setEtag(c, tenant.version);
        return c.json(tenant, 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'patch', path: '/v1/tenants/{tenantId}', tags: t, security: bearer, middleware: mw(PERMISSIONS.tenantsWrite),
        summary: 'Rename a tenant and/or merge-patch its attributes (If-Match required)',
        request: { params: TenantParams, headers: IfMatchHeader, body: jsonBody(UpdateTenantInput) },
        responses: { 200: jsonResponse(TenantSchema, 'Updated'), ...errorResponses(400, 401, 403, 404, 409, 412, 415, 428) },
      }),
      async (c) => {
        const version = ifMatch(c);
        const tenant = await precondition(s.tenants.update(ctxOf(c), c.req.valid('param').tenantId, c.req.valid('json'), version));
        setEtag(c, tenant.version);
        return c.json(tenant, 200);
      },
    );
    for (const action of ['suspend', 'reactivate'] as const) {
      app.openapi(
        createRoute({
          method: 'post', path: `/v1/tenants/{tenantId}/${action}`, tags: t, security: bearer, middleware: mw(PERMISSIONS.platformAdmin),
          summary: action === 'suspend' ? "Suspend a tenant: its users are denied from then on" : 'Reactivate a suspended tenant',
          request: { params: TenantParams, headers: OptionalIfMatchHeader },
          responses: { 200: jsonResponse(TenantSchema, 'The tenant'), ...errorResponses(400, 401, 403, 404, 412) },
        }),
        async (c) => {
          const id = c.req.valid('param').tenantId;
          const tenant = await precondition(s.tenants[action](ctxOf(c), id, ifMatch(c, false)));
          setEtag(c, tenant.version);
          return c.json(tenant, 200);
        },
      );
    }
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}/overview', tags: t, security: bearer, middleware: mw(PERMISSIONS.tenantsRead),
        summary: "The tenant with its addresses, technical users, licenses and top-level nodes: ONE Query of its partition",
        request: { params: TenantParams, query: PaginationQuery },
        responses: { 200: jsonResponse(OverviewSchema, 'One page of the tenant partition, grouped'), ...errorResponses(400, 401, 403, 404) },
      }),
      async (c) => {
        const o = await s.tenants.overview(c.req.valid('param').tenantId, c.req.valid('query'));
        const body = { tenant: o.tenant, addresses: o.addresses.map(strip), techUsers: o.techUsers.map(strip), licenses: o.licenses.map(strip), children: o.children, cursor: o.cursor };
        return c.json(body as z.infer<typeof OverviewSchema>, 200);
      },
    );

    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}/entities', tags: t, security: bearer, middleware: mw(PERMISSIONS.tenantsRead),
        summary: 'Every entity of the tenant (scope nodes, users, groups): ONE Query on GSI1',
        request: { params: TenantParams, query: PaginationQuery },
        responses: { 200: jsonResponse(EntityList, 'A page of entity references'), ...errorResponses(400, 401, 403) },
      }),
      async (c) => c.json(await s.tenants.entities(c.req.valid('param').tenantId, c.req.valid('query')), 200),
    );

    // ---- scope nodes ----
    app.openapi(
      createRoute({
        method: 'post', path: '/v1/tenants/{tenantId}/scopes', tags: t, security: bearer, middleware: mw(PERMISSIONS.scopesWrite),
        summary: 'Create a scope node under a parent of the declared parent kind (no parentId: under the tenant)',
        request: { params: TenantParams, body: jsonBody(CreateScopeInput) },
        responses: { 201: jsonResponse(ScopeSchema, 'Created'), ...errorResponses(400, 401, 403, 404, 409, 415) },
      }),
      async (c) => {
        const { tenantId } = c.req.valid('param');
        const node = await s.scopes.create(ctxOf(c), tenantId, c.req.valid('json'));
        setEtag(c, node.version);
        return json201(c, node, `/v1/tenants/${tenantId}/scopes/${node.id}`);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}/scopes', tags: t, security: bearer, middleware: mw(PERMISSIONS.scopesRead),
        summary: 'Scope nodes: all in tree order (GSI5), of a kind (GSI1), linked to a node (GSI2), by code (GetItem) or newest first (GSI4)',
        request: { params: TenantParams, query: ScopeListQuery },
        responses: { 200: jsonResponse(ScopeList, 'A page of nodes'), ...errorResponses(400, 401, 403) },
      }),
      async (c) => {
        const { tenantId } = c.req.valid('param');
        const q = c.req.valid('query');
        if (q.code !== undefined) {
          const one = await s.scopes.getByCode(tenantId, q.code, q.kind);
          return c.json({ items: one ? [one] : [], cursor: null }, 200);
        }
        if (q.linkedTo !== undefined) {
          const kind = q.kind ?? Object.values(h.kinds).find((k) => k.links?.length)?.name;
          if (!kind) throw validation('linkedTo', 'No kind of this hierarchy is linked to another');
          return c.json(await s.scopes.linked(tenantId, kind, q.linkedTo, q), 200);
        }
        if (q.sort === 'recent') return c.json(await s.scopes.recent(tenantId, q), 200);
        if (q.since !== undefined) throw validation('since', 'Only with sort=recent');
        if (q.kind !== undefined) return c.json(await s.scopes.ofKind(tenantId, q.kind, q), 200);
        return c.json(await s.scopes.tree(tenantId, q), 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}/scopes/{scopeId}', tags: t, security: bearer, middleware: mw(PERMISSIONS.scopesRead),
        summary: 'A node with its ancestor path (one strongly consistent GetItem with ?kind=, else one BatchGetItem)',
        request: { params: ScopeParams, query: KindQuery },
        responses: { 200: jsonResponse(ScopeSchema, 'The node; ETag is its version'), ...errorResponses(400, 401, 403, 404) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        const node = await s.scopes.get(p.tenantId, p.scopeId, c.req.valid('query'));
        setEtag(c, node.version);
        return c.json(node, 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'patch', path: '/v1/tenants/{tenantId}/scopes/{scopeId}', tags: t, security: bearer, middleware: mw(PERMISSIONS.scopesWrite),
        summary: "Rename a node and/or merge-patch its attributes (validated against its kind's schema; If-Match required)",
        request: { params: ScopeParams, query: KindQuery, headers: IfMatchHeader, body: jsonBody(UpdateScopeInput) },
        responses: { 200: jsonResponse(ScopeSchema, 'Updated'), ...errorResponses(400, 401, 403, 404, 409, 412, 415, 428) },
      }),
      async (c) => {
        const version = ifMatch(c);
        const p = c.req.valid('param');
        const node = await precondition(s.scopes.update(ctxOf(c), p.tenantId, p.scopeId, c.req.valid('json'), version, c.req.valid('query')));
        setEtag(c, node.version);
        return c.json(node, 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'delete', path: '/v1/tenants/{tenantId}/scopes/{scopeId}', tags: t, security: bearer, middleware: mw(PERMISSIONS.scopesWrite),
        summary: 'Delete a leaf node (409 while it has children, members, resources, catalog items or assignments; If-Match required)',
        request: { params: ScopeParams, query: KindQuery, headers: IfMatchHeader },
        responses: { 204: { description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 409, 412, 428) },
      }),
      async (c) => {
        const version = ifMatch(c);
        const p = c.req.valid('param');
        await precondition(s.scopes.delete(ctxOf(c), p.tenantId, p.scopeId, version, c.req.valid('query')));
        return c.body(null, 204);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}/scopes/{scopeId}/children', tags: t, security: bearer, middleware: mw(PERMISSIONS.scopesRead),
        summary: "A node's children (one Query of its child edges); pass the tenant id for top-level nodes",
        request: {
          params: ScopeParams,
          query: PaginationQuery.merge(KindQuery).extend({ childKind: z.string().min(1).max(32).optional().openapi({ param: { name: 'childKind', in: 'query' } }) }),
        },
        responses: { 200: jsonResponse(ScopeList, 'A page of children'), ...errorResponses(400, 401, 403, 404) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(await s.scopes.children(p.tenantId, p.scopeId, c.req.valid('query')), 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}/scopes/{scopeId}/descendants', tags: t, security: bearer, middleware: mw(PERMISSIONS.scopesRead),
        summary: 'Every descendant of a node, in tree order: one paginated Query on the path index (GSI5)',
        request: {
          params: ScopeParams,
          query: PaginationQuery.merge(KindQuery).extend({ descendantKind: z.string().min(1).max(32).optional().openapi({ param: { name: 'descendantKind', in: 'query' } }) }),
        },
        responses: { 200: jsonResponse(ScopeList, 'A page of descendants'), ...errorResponses(400, 401, 403, 404) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(await s.scopes.descendants(p.tenantId, p.scopeId, c.req.valid('query')), 200);
      },
    );

    // ---- catalog assignments on nodes ----
    if (Object.values(h.kinds).some((k) => k.catalog)) {
      app.openapi(
        createRoute({
          method: 'get', path: '/v1/tenants/{tenantId}/scopes/{scopeId}/catalog', tags: t, security: bearer, middleware: mw(PERMISSIONS.catalogRead),
          summary: 'A catalog node (enterprise) with its products and services: ONE Query of its partition',
          request: { params: ScopeParams, query: PaginationQuery.merge(KindQuery) },
          responses: { 200: jsonResponse(ScopeCatalogSchema, 'The node and its assignments'), ...errorResponses(400, 401, 403, 404) },
        }),
        async (c) => {
          const p = c.req.valid('param');
          const q = c.req.valid('query');
          const kind = q.kind ?? s.catalog.defaultKind();
          if (!kind) throw validation('kind', 'Name the kind of the node');
          return c.json(await s.catalog.scopeCatalog(p.tenantId, p.scopeId, kind, q), 200);
        },
      );
      for (const type of ['product', 'service'] as const) {
        const Params = ScopeParams.extend({ itemId: pathParam('itemId') });
        app.openapi(
          createRoute({
            method: 'put', path: `/v1/tenants/{tenantId}/scopes/{scopeId}/${type}s/{itemId}`, tags: t, security: bearer, middleware: mw(PERMISSIONS.catalogWrite),
            summary: `Assign a ${type} to a catalog node (idempotent)`,
            request: { params: Params, query: KindQuery },
            responses: { 201: jsonResponse(CatalogAssignmentSchema, 'Assigned'), 200: jsonResponse(CatalogAssignmentSchema, 'Already assigned'), ...errorResponses(400, 401, 403, 404) },
          }),
          async (c) => {
            const p = c.req.valid('param');
            const r = await s.catalog.assign(ctxOf(c), p.tenantId, p.scopeId, type, p.itemId, c.req.valid('query').kind);
            return r.created ? c.json(r.assignment, 201) : c.json(r.assignment, 200);
          },
        );
        app.openapi(
          createRoute({
            method: 'delete', path: `/v1/tenants/{tenantId}/scopes/{scopeId}/${type}s/{itemId}`, tags: t, security: bearer, middleware: mw(PERMISSIONS.catalogWrite),
            summary: `Unassign a ${type}`,
            request: { params: Params, query: KindQuery },
            responses: { 204: { description: 'Unassigned' }, ...errorResponses(400, 401, 403, 404) },
          }),
          async (c) => {
            const p = c.req.valid('param');
            await s.catalog.unassign(ctxOf(c), p.tenantId, p.scopeId, type, p.itemId, c.req.valid('query').kind);
            return c.body(null, 204);
          },
        );
      }
    }

    // ---- child resources ----
    registerResources(app, s);

    // ---- platform catalog ----
    for (const type of o.platformCatalog === false ? [] : (['product', 'service'] as const)) {
      const Schema = type === 'product' ? ProductSchema : ServiceSchema;
      const base = `/v1/${type}s`;
      const Params = z.object({ itemId: pathParam('itemId') });
      app.openapi(
        createRoute({
          method: 'post', path: base, tags: ['entitlements'], security: bearer, middleware: mw(PERMISSIONS.catalogWrite),
          summary: `Create a ${type} (platform catalog)`,
          request: { body: jsonBody(CreateCatalogItemInput) },
          responses: { 201: jsonResponse(Schema, 'Created'), ...errorResponses(400, 401, 403, 415) },
        }),
        async (c) => {
          const item = await s.catalog.create(ctxOf(c), type, c.req.valid('json'));
          setEtag(c, item.version);
          return json201(c, item, `${base}/${item.id}`);
        },
      );
      app.openapi(
        createRoute({
          method: 'get', path: base, tags: ['entitlements'], security: bearer, middleware: mw(PERMISSIONS.catalogRead),
          summary: `All ${type}s (GSI1)`,
          request: { query: PaginationQuery },
          responses: { 200: jsonResponse(listOf(Schema, type === 'product' ? 'ProductList' : 'ServiceList'), 'A page'), ...errorResponses(400, 401, 403) },
        }),
        async (c) => c.json(await s.catalog.list(type, c.req.valid('query')), 200),
      );
      app.openapi(
        createRoute({
          method: 'get', path: `${base}/{itemId}`, tags: ['entitlements'], security: bearer, middleware: mw(PERMISSIONS.catalogRead),
          summary: `A ${type}`,
          request: { params: Params },
          responses: { 200: jsonResponse(Schema, `The ${type}`), ...errorResponses(401, 403, 404) },
        }),
        async (c) => {
          const item = await s.catalog.get(type, c.req.valid('param').itemId);
          setEtag(c, item.version);
          return c.json(item, 200);
        },
      );
      app.openapi(
        createRoute({
          method: 'patch', path: `${base}/{itemId}`, tags: ['entitlements'], security: bearer, middleware: mw(PERMISSIONS.catalogWrite),
          summary: `Update a ${type} (If-Match required)`,
          request: { params: Params, headers: IfMatchHeader, body: jsonBody(UpdateCatalogItemInput) },
          responses: { 200: jsonResponse(Schema, 'Updated'), ...errorResponses(400, 401, 403, 404, 412, 415, 428) },
        }),
        async (c) => {
          const version = ifMatch(c);
          const item = await precondition(s.catalog.update(ctxOf(c), type, c.req.valid('param').itemId, c.req.valid('json'), version));
          setEtag(c, item.version);
          return c.json(item, 200);
        },
      );
      app.openapi(
        createRoute({
          method: 'delete', path: `${base}/{itemId}`, tags: ['entitlements'], security: bearer, middleware: mw(PERMISSIONS.catalogWrite),
          summary: `Delete a ${type} (409 while assigned; If-Match required)`,
          request: { params: Params, headers: IfMatchHeader },
          responses: { 204: { description: 'Deleted' }, ...errorResponses(401, 403, 404, 409, 412, 428) },
        }),
        async (c) => {
          const version = ifMatch(c);
          await precondition(s.catalog.delete(ctxOf(c), type, c.req.valid('param').itemId, version));
          return c.body(null, 204);
        },
      );
    }
  };
}

const RESOURCE_ROUTES: Record<ResourceType, { segment: string; schema: z.ZodType; create: z.ZodType; update: z.ZodType; name: string }> = {
  address: { segment: 'addresses', schema: AddressSchema, create: CreateAddressInput, update: UpdateAddressInput, name: 'Address' },
  tech_user: { segment: 'tech-users', schema: TechUserSchema, create: CreateTechUserInput, update: UpdateTechUserInput, name: 'TechUser' },
  tool: { segment: 'tools', schema: ToolSchema, create: CreateToolInput, update: UpdateToolInput, name: 'Tool' },
};

/** Addresses / tech users / tools, under the tenant and/or under nodes, as the hierarchy declares. */
function registerResources(app: AppHono, s: TenancyServices) {
  const h = s.hierarchy;
  for (const type of RESOURCE_TYPES) {
    const r = RESOURCE_ROUTES[type];
    const forms: { owned: 'tenant' | 'scope'; base: string }[] = [];
    if ((h.tenantResources ?? []).includes(type)) forms.push({ owned: 'tenant', base: `/v1/tenants/{tenantId}/${r.segment}` });
    if (Object.values(h.kinds).some((k) => k.resources?.includes(type))) forms.push({ owned: 'scope', base: `/v1/tenants/{tenantId}/scopes/{scopeId}/${r.segment}` });
    for (const f of forms) {
      const read = f.owned === 'tenant' ? PERMISSIONS.tenantsRead : PERMISSIONS.scopesRead;
      const write = f.owned === 'tenant' ? PERMISSIONS.tenantsWrite : PERMISSIONS.scopesWrite;
      const Owner = f.owned === 'tenant' ? TenantParams : ScopeParams;
      const One = Owner.extend({ id: pathParam('id') });
      const query = f.owned === 'scope' ? KindQuery : z.object({});
      // The owner of a scope-owned resource: one read to learn the node's kind (or none with ?kind=).
      const owner = async (p: { tenantId: string; scopeId?: string }, kind?: string): Promise<ScopeRef> => {
        if (f.owned === 'tenant') return { kind: h.tenantKind, id: p.tenantId };
        if (kind) return { kind, id: p.scopeId! };
        const n = await s.scopes.find(p.tenantId, p.scopeId!);
        if (!n) throw notFound('scope', p.scopeId);
        return { kind: n.kind, id: n.id };
      };
      const where = f.owned === 'tenant' ? `a ${h.tenantKind}` : 'a scope node';
      app.openapi(
        createRoute({
          method: 'post', path: f.base, tags: ['tenancy'], security: bearer, middleware: mw(write),
          summary: `Add a ${type.replace('_', ' ')} to ${where}`,
          request: { params: Owner, query, body: jsonBody(r.create) },
          responses: { 201: jsonResponse(r.schema, 'Created'), ...errorResponses(400, 401, 403, 404, 415) },
        }),
        async (c) => {
          const p = c.req.valid('param') as { tenantId: string; scopeId?: string };
          const o = await owner(p, (c.req.valid('query') as { kind?: string }).kind);
          const item = await s.resources.create(ctxOf(c), p.tenantId, o, type, c.req.valid('json'));
          setEtag(c, item.version);
          return json201(c, item as never, `${c.req.path}/${item.id}`);
        },
      );
      app.openapi(
        createRoute({
          method: 'get', path: f.base, tags: ['tenancy'], security: bearer, middleware: mw(read),
          summary: `The ${r.segment} of ${where} (one Query of its partition)`,
          request: { params: Owner, query: PaginationQuery.merge(query as typeof KindQuery) },
          responses: { 200: jsonResponse(listOf(r.schema, `${r.name}List`), 'A page'), ...errorResponses(400, 401, 403, 404) },
        }),
        async (c) => {
          const p = c.req.valid('param') as { tenantId: string; scopeId?: string };
          const q = c.req.valid('query') as { kind?: string; limit: number; cursor?: string };
          return c.json((await s.resources.list(p.tenantId, await owner(p, q.kind), type, q)) as never, 200);
        },
      );
      app.openapi(
        createRoute({
          method: 'get', path: `${f.base}/{id}`, tags: ['tenancy'], security: bearer, middleware: mw(read),
          summary: `A ${type.replace('_', ' ')} (one GetItem)`,
          request: { params: One, query },
          responses: { 200: jsonResponse(r.schema, 'Found'), ...errorResponses(400, 401, 403, 404) },
        }),
        async (c) => {
          const p = c.req.valid('param') as { tenantId: string; scopeId?: string; id: string };
          const item = await s.resources.get(p.tenantId, await owner(p, (c.req.valid('query') as { kind?: string }).kind), type, p.id);
          setEtag(c, item.version);
          return c.json(item as never, 200);
        },
      );
      app.openapi(
        createRoute({
          method: 'patch', path: `${f.base}/{id}`, tags: ['tenancy'], security: bearer, middleware: mw(write),
          summary: `Update a ${type.replace('_', ' ')} (If-Match required)`,
          request: { params: One, query, headers: IfMatchHeader, body: jsonBody(r.update) },
          responses: { 200: jsonResponse(r.schema, 'Updated'), ...errorResponses(400, 401, 403, 404, 412, 415, 428) },
        }),
        async (c) => {
          const version = ifMatch(c);
          const p = c.req.valid('param') as { tenantId: string; scopeId?: string; id: string };
          const o = await owner(p, (c.req.valid('query') as { kind?: string }).kind);
          const item = await precondition(s.resources.update(ctxOf(c), p.tenantId, o, type, p.id, c.req.valid('json'), version));
          setEtag(c, item.version);
          return c.json(item as never, 200);
        },
      );
      app.openapi(
        createRoute({
          method: 'delete', path: `${f.base}/{id}`, tags: ['tenancy'], security: bearer, middleware: mw(write),
          summary: `Delete a ${type.replace('_', ' ')} (If-Match required)`,
          request: { params: One, query, headers: IfMatchHeader },
          responses: { 204: { description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 412, 428) },
        }),
        async (c) => {
          const version = ifMatch(c);
          const p = c.req.valid('param') as { tenantId: string; scopeId?: string; id: string };
          const o = await owner(p, (c.req.valid('query') as { kind?: string }).kind);
          await precondition(s.resources.delete(ctxOf(c), p.tenantId, o, type, p.id, version));
          return c.body(null, 204);
        },
      );
    }
  }
}
