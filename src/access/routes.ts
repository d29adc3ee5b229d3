/** HTTP routes of the access module (design brief §8, extended). */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { ScopeRefSchema } from '../entitlements/http.ts';
import { GatehouseError } from '../errors.ts';
import { authorize, ctxOf } from '../http/caller.ts';
import { bearer, errorResponses, json201, jsonBody, jsonResponse, listOf, PaginationQuery } from '../http/common.ts';
import type { RouteModule } from '../http/deps.ts';
import type { ScopeRef } from '../tenancy/model.ts';
import type { Access } from './index.ts';
import { CHECK_PERMISSION, PLATFORM_ADMIN_PERMISSION } from './system.ts';

export const ACCESS_PERMISSIONS = {
  platformAdmin: PLATFORM_ADMIN_PERMISSION,
  check: CHECK_PERMISSION,
  permissionsRead: 'gatehouse:permissions:read',
  rolesRead: 'gatehouse:roles:read',
  rolesWrite: 'gatehouse:roles:write',
  groupsRead: 'gatehouse:groups:read',
  groupsWrite: 'gatehouse:groups:write',
  assignmentsRead: 'gatehouse:assignments:read',
  assignmentsWrite: 'gatehouse:assignments:write',
  policiesRead: 'gatehouse:policies:read',
} as const;
const P = ACCESS_PERMISSIONS;

// ---- schemas ---------------------------------------------------------------------------------------

const Timestamp = z.string().openapi({ example: '2025-01-31T12:00:00.000Z' });
const Versioned = { version: z.number().int(), createdAt: Timestamp, updatedAt: Timestamp };
const Effect = z.enum(['ALLOW', 'DENY']);
// Key grammar is checked by the service so that errors name `permissions[i].key`.
const RuleSchema = z.object({ key: z.string().min(1).max(200).openapi({ example: 'devices:read' }), effect: Effect }).openapi('PermissionRule');
const CompiledRuleSchema = RuleSchema.extend({ roleId: z.string().openapi({ description: 'The role (this one or an ancestor) defining the rule' }) });

const PermissionSchema = z
  .object({ key: z.string(), module: z.string(), action: z.string(), resource: z.string().optional(), isPage: z.boolean(), description: z.string().optional(), isDangerous: z.boolean(), ...Versioned })
  .openapi('Permission');
const PermissionCreate = z.object({
  key: z.string().min(1).max(200).openapi({ example: 'devices:configure' }),
  description: z.string().max(1000).optional(),
  isDangerous: z.boolean().optional(),
});

const RoleSchema = z
  .object({
    id: z.string(),
    scope: z.enum(['global', 'tenant']),
    tenantId: z.string().optional(),
    name: z.string(),
    description: z.string().optional(),
    parentRoleId: z.string().optional(),
    ancestorIds: z.array(z.string()),
    permissions: z.array(RuleSchema),
    effectivePermissions: z.array(CompiledRuleSchema).openapi({ description: 'Own rules and every ancestor’s (materialized inheritance)' }),
    isSystem: z.boolean().optional(),
    ...Versioned,
  })
  .openapi('Role');
const RoleCreate = z.object({
  name: z.string().min(1).max(100),
  description: z.string().max(1000).optional(),
  parentRoleId: z.string().min(1).max(128).optional(),
  permissions: z.array(RuleSchema).max(80),
});
const GlobalRoleCreate = RoleCreate.extend({ id: z.string().min(2).max(63).optional().openapi({ description: 'A readable slug, e.g. `site-viewer`' }) });
const RolePatch = z.object({
  name: z.string().min(1).max(100).optional(),
  description: z.string().max(1000).nullable().optional(),
  parentRoleId: z.string().min(1).max(128).nullable().optional().openapi({ description: 'null removes the parent' }),
  permissions: z.array(RuleSchema).max(80).optional().openapi({ description: 'Replaces the role’s own rules' }),
});
const RoleEdgeSchema = z.object({ roleId: z.string(), tenantId: z.string(), name: z.string(), description: z.string().optional(), parentRoleId: z.string().optional(), ...Versioned }).openapi('TenantRole');
const RoleDeleted = z.object({ id: z.string(), deleted: z.boolean(), assignments: z.number().int(), groups: z.number().int() });

const GroupSchema = z.object({ id: z.string(), tenantId: z.string(), name: z.string(), description: z.string().optional(), scope: ScopeRefSchema, ...Versioned }).openapi('Group');
const GroupCreated = GroupSchema.extend({ roleIds: z.array(z.string()) });
const GroupCreate = z.object({ name: z.string().min(1).max(100), description: z.string().max(1000).optional(), scope: ScopeRefSchema, roleIds: z.array(z.string().min(1).max(128)).max(50).optional() });
const GroupMemberSchema = z.object({ groupId: z.string(), userId: z.string(), tenantId: z.string(), scope: ScopeRefSchema, ...Versioned }).openapi('GroupMember');
const GroupRoleSchema = z.object({ groupId: z.string(), roleId: z.string(), tenantId: z.string(), ...Versioned }).openapi('GroupRole');

const AssignmentSchema = z
  .object({
    id: z.string().openapi({ description: 'Opaque; encodes the assignment key' }),
    tenantId: z.string(),
    userId: z.string(),
    roleId: z.string(),
    scope: ScopeRefSchema,
    startAt: Timestamp.optional(),
    expiresAt: Timestamp.optional(),
    ...Versioned,
  })
  .openapi('Assignment');
const AssignmentCreate = z.object({
  userId: z.string().min(1).max(128),
  roleId: z.string().min(1).max(128),
  scope: ScopeRefSchema,
  startAt: z.string().max(40).optional().openapi({ description: 'ISO instant; the assignment counts from then (inclusive)' }),
  expiresAt: z.string().max(40).optional().openapi({ description: 'ISO instant; the assignment stops counting then (exclusive)' }),
});

const PolicySchema = z.object({ id: z.string(), name: z.string(), description: z.string().optional(), attributes: z.record(z.string(), z.unknown()).optional(), ...Versioned }).openapi('Policy');
const PolicyCreate = z.object({ name: z.string().min(1).max(200), id: z.string().min(1).max(128).optional(), description: z.string().max(1000).optional(), attributes: z.record(z.string(), z.unknown()).optional() });
const PolicyPatch = z.object({ name: z.string().min(1).max(200).optional(), description: z.string().max(1000).nullable().optional(), attributes: z.record(z.string(), z.unknown()).optional() });

const Reason = z.enum(['allowed', 'no-grant', 'outside-window', 'denied-by-rule', 'user-disabled', 'user-not-found', 'not-a-member', 'tenant-suspended', 'tenant-not-found', 'scope-not-in-tenant']);
const CheckBody = z.object({
  userId: z.string().min(1).max(128),
  permission: z.string().min(1).max(200).openapi({ example: 'devices:configure' }),
  scope: ScopeRefSchema,
  at: z.string().max(40).optional().openapi({ description: 'Evaluate at this instant (default now)' }),
  maxStalenessMs: z.number().int().min(0).max(3_600_000).optional().openapi({ description: 'Opt-in: accept a cached answer validated at most this long ago (no DynamoDB request)' }),
});
const DecisionSchema = z
  .object({ allowed: z.boolean(), reason: Reason, permission: z.string(), scope: ScopeRefSchema, source: z.enum(['cold', 'validated', 'bounded']).openapi({ description: 'cold = resolved from the table; validated = cache confirmed by its version stamps; bounded = cache within maxStalenessMs' }) })
  .openapi('Decision');
const CheckManyBody = z.object({
  userId: z.string().min(1).max(128),
  checks: z.array(z.object({ permission: z.string().min(1).max(200), scope: ScopeRefSchema })).min(1).max(500),
  at: z.string().max(40).optional(),
  maxStalenessMs: z.number().int().min(0).max(3_600_000).optional(),
});
const ExplainBody = CheckBody.omit({ maxStalenessMs: true });
const ExplanationSchema = z
  .object({
    allowed: z.boolean(),
    reason: Reason,
    permission: z.string(),
    scope: ScopeRefSchema,
    at: Timestamp,
    decidedBy: z
      .object({
        type: z.enum(['assignment', 'group', 'tenantGrant']),
        assignmentId: z.string().optional(),
        groupId: z.string().optional(),
        tenantGrantId: z.string().optional(),
        roleId: z.string(),
        rule: z.object({ key: z.string(), effect: Effect, definedBy: z.string() }),
        scope: ScopeRefSchema,
        window: z.object({ startAt: Timestamp.optional(), expiresAt: Timestamp.optional() }).optional(),
      })
      .optional(),
    grantsConsidered: z.number().int(),
  })
  .openapi('Explanation');

// ---- params --------------------------------------------------------------------------------------

const param = (name: string) => z.string().min(1).max(1024).openapi({ param: { name, in: 'path' } });
const query = (name: string, description?: string) => z.string().min(1).max(200).optional().openapi({ param: { name, in: 'query' }, ...(description ? { description } : {}) });
const PTenant = z.object({ tenantId: param('tenantId') });
const ScopeQuery = z.object({ scopeKind: query('scopeKind', 'With scopeId: a scope'), scopeId: query('scopeId') });
const IfMatch = z.object({ 'if-match': z.string().optional().openapi({ param: { name: 'if-match', in: 'header' }, description: 'The ETag (version) the change is based on' }) });

function ifMatchOf(c: Context, required: boolean): number | undefined {
  const h = c.req.header('if-match');
  if (h === undefined || h === '') {
    if (required) throw new GatehouseError('PRECONDITION_REQUIRED', 'Send If-Match with the ETag you read (e.g. "3")');
    return undefined;
  }
  const m = /^(?:W\/)?"?(\d+)"?$/.exec(h.trim());
  if (!m) throw new GatehouseError('PRECONDITION_FAILED', 'If-Match must be the ETag of the current version, e.g. "3"');
  return Number(m[1]);
}

function withEtag<T extends { version: number }>(c: Context, body: T): T {
  c.header('etag', `"${body.version}"`);
  return body;
}

function scopeOf(q: { scopeKind?: string; scopeId?: string }, tenantKind: string, tenantId: string, required: boolean): ScopeRef | undefined {
  if (q.scopeId && q.scopeKind) return { kind: q.scopeKind, id: q.scopeId };
  if (q.scopeId || q.scopeKind) throw new GatehouseError('VALIDATION', 'query.scopeKind and query.scopeId go together', { errors: [{ field: q.scopeId ? 'query.scopeKind' : 'query.scopeId', message: 'Required with the other' }] });
  return required ? { kind: tenantKind, id: tenantId } : undefined;
}

const instant = (field: string, v?: string) => {
  if (v === undefined) return undefined;
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw new GatehouseError('VALIDATION', `${field}: must be an ISO date-time`, { errors: [{ field, message: 'Must be an ISO date-time' }] });
  return new Date(t);
};

const notInTenant = (field: string, s: ScopeRef) =>
  new GatehouseError('NOT_FOUND', `${field}: no ${s.kind} ${s.id} in this tenant`, { entity: s.kind, id: s.id, errors: [{ field, message: 'Not found in this tenant' }] });

const J = <T>(v: T) => v as never;

// ---- routes --------------------------------------------------------------------------------------

export const accessRoutes = (access: Access): RouteModule => (app) => {
  const { permissions, roles, groups, assignments, policies, engine } = access;
  const tenantKind = access.hierarchy.tenantKind;
  const mw = (permission: string) => [authorize(permission)];

  // -- permission catalog (platform) --
  {
    const tags = ['access'];
    app.openapi(
      createRoute({ method: 'post', path: '/v1/permissions', tags, security: bearer, summary: 'Add a permission to the catalog (platform admin)', middleware: mw(P.platformAdmin), request: { body: jsonBody(PermissionCreate) }, responses: { 201: jsonResponse(PermissionSchema, 'Created'), ...errorResponses(400, 401, 403, 409) } }),
      async (c) => json201(c, J(await permissions.create(ctxOf(c), c.req.valid('json'))), `/v1/permissions/${encodeURIComponent(c.req.valid('json').key)}`),
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/permissions', tags, security: bearer, summary: '004 permission definitions: one Query on SYSTEM / PERMISSION# (prefix `page:` for pages)', middleware: mw(P.permissionsRead), request: { query: PaginationQuery.extend({ prefix: query('prefix') }) }, responses: { 200: jsonResponse(listOf(PermissionSchema, 'PermissionPage'), 'A page'), ...errorResponses(400, 401, 403) } }),
      async (c) => c.json(J(await permissions.list(c.req.valid('query'))), 200),
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/permissions/{key}', tags, security: bearer, summary: 'One permission', middleware: mw(P.permissionsRead), request: { params: z.object({ key: param('key') }) }, responses: { 200: jsonResponse(PermissionSchema, 'The permission'), ...errorResponses(401, 403, 404) } }),
      async (c) => c.json(J(await permissions.get(c.req.valid('param').key)), 200),
    );
  }

  // -- global roles (platform) --
  {
    const tags = ['access'];
    const PRole = z.object({ roleId: param('roleId') });
    app.openapi(
      createRoute({ method: 'post', path: '/v1/roles', tags, security: bearer, summary: 'Create a global role (platform admin); `id` may be a readable slug', middleware: mw(P.platformAdmin), request: { body: jsonBody(GlobalRoleCreate) }, responses: { 201: jsonResponse(RoleSchema, 'Created'), ...errorResponses(400, 401, 403, 404, 409) } }),
      async (c) => {
        const r = await roles.create(ctxOf(c), undefined, c.req.valid('json'));
        return json201(c, J(withEtag(c, r)), `/v1/roles/${r.id}`);
      },
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/roles', tags, security: bearer, summary: 'Global roles (GSI1 ENTITY#ROLE)', middleware: mw(P.rolesRead), request: { query: PaginationQuery }, responses: { 200: jsonResponse(listOf(RoleSchema, 'RolePage'), 'A page'), ...errorResponses(400, 401, 403) } }),
      async (c) => c.json(J(await roles.listGlobal(c.req.valid('query'))), 200),
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/roles/{roleId}', tags, security: bearer, summary: 'A global role', middleware: mw(P.rolesRead), request: { params: PRole }, responses: { 200: jsonResponse(RoleSchema, 'The role'), ...errorResponses(401, 403, 404) } }),
      async (c) => c.json(J(withEtag(c, await roles.get(undefined, c.req.valid('param').roleId))), 200),
    );
    app.openapi(
      createRoute({ method: 'patch', path: '/v1/roles/{roleId}', tags, security: bearer, summary: 'Change a global role (If-Match required); descendants are recompiled atomically', middleware: mw(P.platformAdmin), request: { params: PRole, headers: IfMatch, body: jsonBody(RolePatch) }, responses: { 200: jsonResponse(RoleSchema, 'The role'), ...errorResponses(400, 401, 403, 404, 409, 412, 428) } }),
      async (c) => c.json(J(withEtag(c, await roles.update(ctxOf(c), undefined, c.req.valid('param').roleId, c.req.valid('json'), ifMatchOf(c, true)))), 200),
    );
    app.openapi(
      createRoute({ method: 'delete', path: '/v1/roles/{roleId}', tags, security: bearer, summary: 'Delete a global role: 409 with the count while assigned, unless cascade=true', middleware: mw(P.platformAdmin), request: { params: PRole, headers: IfMatch, query: z.object({ cascade: z.enum(['true', 'false']).optional().openapi({ param: { name: 'cascade', in: 'query' } }) }) }, responses: { 200: jsonResponse(RoleDeleted, 'Deleted'), ...errorResponses(401, 403, 404, 409, 412) } }),
      async (c) => c.json(await roles.remove(ctxOf(c), undefined, c.req.valid('param').roleId, { cascade: c.req.valid('query').cascade === 'true', expectedVersion: ifMatchOf(c, false) }), 200),
    );
  }

  // -- tenant roles --
  {
    const tags = ['access'];
    const PRole = PTenant.extend({ roleId: param('roleId') });
    app.openapi(
      createRoute({ method: 'post', path: '/v1/tenants/{tenantId}/roles', tags, security: bearer, summary: 'Create a tenant role (unique name per tenant; optional parent of the same tenant)', middleware: mw(P.rolesWrite), request: { params: PTenant, body: jsonBody(RoleCreate) }, responses: { 201: jsonResponse(RoleSchema, 'Created'), ...errorResponses(400, 401, 403, 404, 409) } }),
      async (c) => {
        const { tenantId } = c.req.valid('param');
        const r = await roles.create(ctxOf(c), tenantId, c.req.valid('json'));
        return json201(c, J(withEtag(c, r)), `/v1/tenants/${tenantId}/roles/${r.id}`);
      },
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/tenants/{tenantId}/roles', tags, security: bearer, summary: '000/004 roles of a tenant: one Query on <T>#<tid> / ROLE#', middleware: mw(P.rolesRead), request: { params: PTenant, query: PaginationQuery }, responses: { 200: jsonResponse(listOf(RoleEdgeSchema, 'TenantRolePage'), 'A page'), ...errorResponses(400, 401, 403) } }),
      async (c) => c.json(J(await roles.listOfTenant(c.req.valid('param').tenantId, c.req.valid('query'))), 200),
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/tenants/{tenantId}/roles/by-name/{name}', tags, security: bearer, summary: '003 role by scope + name: GetItem of the name guard, GetItem of the role', middleware: mw(P.rolesRead), request: { params: PTenant.extend({ name: param('name') }) }, responses: { 200: jsonResponse(RoleSchema, 'The role'), ...errorResponses(401, 403, 404) } }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(J(withEtag(c, await roles.byName(p.tenantId, p.name))), 200);
      },
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/tenants/{tenantId}/roles/{roleId}', tags, security: bearer, summary: 'A role of the tenant, or a global role (003 role by id: one GetItem)', middleware: mw(P.rolesRead), request: { params: PRole }, responses: { 200: jsonResponse(RoleSchema, 'The role'), ...errorResponses(401, 403, 404) } }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(J(withEtag(c, await roles.get(p.tenantId, p.roleId))), 200);
      },
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/tenants/{tenantId}/roles/{roleId}/pages', tags, security: bearer, summary: '002 pages of a role: one Query on ROLE#<id> / PERMISSION#page:', middleware: mw(P.rolesRead), request: { params: PRole }, responses: { 200: jsonResponse(z.object({ items: z.array(RuleSchema) }), 'The role’s own page rules'), ...errorResponses(401, 403, 404) } }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json({ items: await roles.pagesOf(p.tenantId, p.roleId) }, 200);
      },
    );
    app.openapi(
      createRoute({ method: 'patch', path: '/v1/tenants/{tenantId}/roles/{roleId}', tags, security: bearer, summary: 'Change a role (If-Match required); descendants are recompiled in the same transaction; a parent cycle is 400 naming parentRoleId', middleware: mw(P.rolesWrite), request: { params: PRole, headers: IfMatch, body: jsonBody(RolePatch) }, responses: { 200: jsonResponse(RoleSchema, 'The role'), ...errorResponses(400, 401, 403, 404, 409, 412, 428) } }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(J(withEtag(c, await roles.update(ctxOf(c), p.tenantId, p.roleId, c.req.valid('json'), ifMatchOf(c, true)))), 200);
      },
    );
    app.openapi(
      createRoute({ method: 'delete', path: '/v1/tenants/{tenantId}/roles/{roleId}', tags, security: bearer, summary: 'Delete a role: 409 with the number of assignments/groups holding it, unless cascade=true', middleware: mw(P.rolesWrite), request: { params: PRole, headers: IfMatch, query: z.object({ cascade: z.enum(['true', 'false']).optional().openapi({ param: { name: 'cascade', in: 'query' } }) }) }, responses: { 200: jsonResponse(RoleDeleted, 'Deleted'), ...errorResponses(401, 403, 404, 409, 412) } }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(await roles.remove(ctxOf(c), p.tenantId, p.roleId, { cascade: c.req.valid('query').cascade === 'true', expectedVersion: ifMatchOf(c, false) }), 200);
      },
    );
  }

  // -- groups --
  {
    const tags = ['access'];
    const PGroup = PTenant.extend({ groupId: param('groupId') });
    const PMember = PGroup.extend({ userId: param('userId') });
    const PGroupRole = PGroup.extend({ roleId: param('roleId') });
    app.openapi(
      createRoute({ method: 'post', path: '/v1/tenants/{tenantId}/groups', tags, security: bearer, summary: 'Create a group scoped to a scope (its roles apply there and below)', middleware: mw(P.groupsWrite), request: { params: PTenant, body: jsonBody(GroupCreate) }, responses: { 201: jsonResponse(GroupCreated, 'Created'), ...errorResponses(400, 401, 403, 404) } }),
      async (c) => {
        const { tenantId } = c.req.valid('param');
        const g = await groups.create(ctxOf(c), tenantId, c.req.valid('json'));
        return json201(c, J(withEtag(c, g)), `/v1/tenants/${tenantId}/groups/${g.id}`);
      },
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/tenants/{tenantId}/groups', tags, security: bearer, summary: 'Groups of the tenant (GSI1)', middleware: mw(P.groupsRead), request: { params: PTenant, query: PaginationQuery }, responses: { 200: jsonResponse(listOf(GroupSchema, 'GroupPage'), 'A page'), ...errorResponses(400, 401, 403) } }),
      async (c) => c.json(J(await groups.list(c.req.valid('param').tenantId, c.req.valid('query'))), 200),
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/tenants/{tenantId}/groups/{groupId}', tags, security: bearer, summary: '002 group: one GetItem', middleware: mw(P.groupsRead), request: { params: PGroup }, responses: { 200: jsonResponse(GroupSchema, 'The group'), ...errorResponses(401, 403, 404) } }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(J(withEtag(c, await groups.get(p.tenantId, p.groupId))), 200);
      },
    );
    app.openapi(
      createRoute({ method: 'delete', path: '/v1/tenants/{tenantId}/groups/{groupId}', tags, security: bearer, summary: 'Delete a group (its roles stop applying at once; memberships are removed after)', middleware: mw(P.groupsWrite), request: { params: PGroup }, responses: { 200: jsonResponse(z.object({ id: z.string(), deleted: z.boolean(), members: z.number().int() }), 'Deleted'), ...errorResponses(401, 403, 404, 409) } }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(await groups.remove(ctxOf(c), p.tenantId, p.groupId), 200);
      },
    );
    app.openapi(
      createRoute({ method: 'put', path: '/v1/tenants/{tenantId}/groups/{groupId}/members/{userId}', tags, security: bearer, summary: 'Add a member (idempotent)', middleware: mw(P.groupsWrite), request: { params: PMember }, responses: { 200: jsonResponse(GroupMemberSchema, 'The membership'), ...errorResponses(401, 403, 404) } }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(J(await groups.addMember(ctxOf(c), p.tenantId, p.groupId, p.userId)), 200);
      },
    );
    app.openapi(
      createRoute({ method: 'delete', path: '/v1/tenants/{tenantId}/groups/{groupId}/members/{userId}', tags, security: bearer, summary: 'Remove a member', middleware: mw(P.groupsWrite), request: { params: PMember }, responses: { 200: jsonResponse(z.object({ groupId: z.string(), userId: z.string(), deleted: z.boolean() }), 'Removed'), ...errorResponses(401, 403, 404) } }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(await groups.removeMember(ctxOf(c), p.tenantId, p.groupId, p.userId), 200);
      },
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/tenants/{tenantId}/groups/{groupId}/members', tags, security: bearer, summary: '002 users of a group: one Query GROUP#<gid> / USER#', middleware: mw(P.groupsRead), request: { params: PGroup, query: PaginationQuery }, responses: { 200: jsonResponse(listOf(GroupMemberSchema, 'GroupMemberPage'), 'A page'), ...errorResponses(400, 401, 403, 404) } }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(J(await groups.members(p.tenantId, p.groupId, c.req.valid('query'))), 200);
      },
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/tenants/{tenantId}/groups/{groupId}/roles', tags, security: bearer, summary: '002 roles of a group: one Query GROUP#<gid> / ROLE#', middleware: mw(P.groupsRead), request: { params: PGroup, query: PaginationQuery }, responses: { 200: jsonResponse(listOf(GroupRoleSchema, 'GroupRolePage'), 'A page'), ...errorResponses(400, 401, 403, 404) } }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(J(await groups.roles(p.tenantId, p.groupId, c.req.valid('query'))), 200);
      },
    );
    app.openapi(
      createRoute({ method: 'put', path: '/v1/tenants/{tenantId}/groups/{groupId}/roles/{roleId}', tags, security: bearer, summary: 'Give the group a role (idempotent)', middleware: mw(P.groupsWrite), request: { params: PGroupRole }, responses: { 200: jsonResponse(GroupRoleSchema, 'The group role'), ...errorResponses(400, 401, 403, 404) } }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(J(await groups.addRole(ctxOf(c), p.tenantId, p.groupId, p.roleId)), 200);
      },
    );
    app.openapi(
      createRoute({ method: 'delete', path: '/v1/tenants/{tenantId}/groups/{groupId}/roles/{roleId}', tags, security: bearer, summary: 'Take a role from the group', middleware: mw(P.groupsWrite), request: { params: PGroupRole }, responses: { 200: jsonResponse(z.object({ groupId: z.string(), roleId: z.string(), deleted: z.boolean() }), 'Removed'), ...errorResponses(401, 403, 404) } }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(await groups.removeRole(ctxOf(c), p.tenantId, p.groupId, p.roleId), 200);
      },
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/tenants/{tenantId}/users/{userId}/groups', tags, security: bearer, summary: '002 groups of a user (in a scope): one Query USER#<uid> / GROUP#', middleware: mw(P.groupsRead), request: { params: PTenant.extend({ userId: param('userId') }), query: ScopeQuery }, responses: { 200: jsonResponse(z.object({ items: z.array(GroupMemberSchema) }), 'The memberships'), ...errorResponses(400, 401, 403) } }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(J({ items: await groups.ofUser(p.tenantId, p.userId, scopeOf(c.req.valid('query'), tenantKind, p.tenantId, false)) }), 200);
      },
    );
  }

  // -- assignments --
  {
    const tags = ['access'];
    const PAssignment = PTenant.extend({ assignmentId: param('assignmentId') });
    app.openapi(
      createRoute({ method: 'post', path: '/v1/tenants/{tenantId}/assignments', tags, security: bearer, summary: 'Assign a role to a user at a scope, optionally within [startAt, expiresAt)', middleware: mw(P.assignmentsWrite), request: { params: PTenant, body: jsonBody(AssignmentCreate) }, responses: { 201: jsonResponse(AssignmentSchema, 'Created'), ...errorResponses(400, 401, 403, 404, 409) } }),
      async (c) => {
        const { tenantId } = c.req.valid('param');
        const a = await assignments.create(ctxOf(c), tenantId, c.req.valid('json'));
        return json201(c, J(withEtag(c, a)), `/v1/tenants/${tenantId}/assignments/${a.id}`);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}/assignments', tags, security: bearer,
        summary: "A user's assignments (?userId=, optionally at one scope: one Query USER#<uid> / ROLE#…) or who holds access at a scope (?scopeKind=&scopeId=: GSI2)",
        middleware: mw(P.assignmentsRead),
        request: { params: PTenant, query: PaginationQuery.extend({ userId: query('userId'), ...ScopeQuery.shape }) },
        responses: { 200: jsonResponse(listOf(AssignmentSchema, 'AssignmentPage'), 'A page'), ...errorResponses(400, 401, 403, 404) },
      }),
      async (c) => {
        const { tenantId } = c.req.valid('param');
        const q = c.req.valid('query');
        const scope = scopeOf(q, tenantKind, tenantId, false);
        if (q.userId) return c.json(J(await assignments.ofUser(tenantId, q.userId, { scope, limit: q.limit, cursor: q.cursor })), 200);
        if (!scope) throw new GatehouseError('VALIDATION', 'Give userId, or scopeKind and scopeId', { errors: [{ field: 'query.userId', message: 'Required (or a scope)' }] });
        return c.json(J(await assignments.atScope(tenantId, scope, { limit: q.limit, cursor: q.cursor })), 200);
      },
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/tenants/{tenantId}/assignments/{assignmentId}', tags, security: bearer, summary: 'An assignment (its id resolves to its key: one GetItem)', middleware: mw(P.assignmentsRead), request: { params: PAssignment }, responses: { 200: jsonResponse(AssignmentSchema, 'The assignment'), ...errorResponses(401, 403, 404) } }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(J(withEtag(c, await assignments.get(p.tenantId, p.assignmentId))), 200);
      },
    );
    app.openapi(
      createRoute({ method: 'delete', path: '/v1/tenants/{tenantId}/assignments/{assignmentId}', tags, security: bearer, summary: 'Revoke: the very next check on any instance denies', middleware: mw(P.assignmentsWrite), request: { params: PAssignment }, responses: { 200: jsonResponse(z.object({ id: z.string(), deleted: z.boolean() }), 'Revoked'), ...errorResponses(401, 403, 404) } }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(await assignments.revoke(ctxOf(c), p.tenantId, p.assignmentId), 200);
      },
    );
  }

  // -- decisions --
  {
    const tags = ['access'];
    const PUser = PTenant.extend({ userId: param('userId') });
    app.openapi(
      createRoute({ method: 'post', path: '/v1/tenants/{tenantId}/check', tags, security: bearer, summary: 'May the user do this at this scope? Cold ≤ 3 waves; repeated = 1 wave (stamps); maxStalenessMs = 0 requests', middleware: mw(P.check), request: { params: PTenant, body: jsonBody(CheckBody) }, responses: { 200: jsonResponse(DecisionSchema, 'The decision'), ...errorResponses(400, 401, 403, 404) } }),
      async (c) => {
        const { tenantId } = c.req.valid('param');
        const b = c.req.valid('json');
        const d = await engine.check({ tenantId, userId: b.userId, permission: b.permission, scope: b.scope, at: instant('at', b.at), maxStalenessMs: b.maxStalenessMs });
        if (d.reason === 'scope-not-in-tenant') throw notInTenant('scope', b.scope);
        return c.json(d, 200);
      },
    );
    app.openapi(
      createRoute({ method: 'post', path: '/v1/tenants/{tenantId}/check-many', tags, security: bearer, summary: 'Many checks (≤ 500) for one user in the waves of one check; results in order', middleware: mw(P.check), request: { params: PTenant, body: jsonBody(CheckManyBody) }, responses: { 200: jsonResponse(z.object({ results: z.array(DecisionSchema) }), 'The decisions, in order'), ...errorResponses(400, 401, 403, 404) } }),
      async (c) => {
        const { tenantId } = c.req.valid('param');
        const b = c.req.valid('json');
        const results = await engine.checkMany({ tenantId, userId: b.userId, checks: b.checks, at: instant('at', b.at), maxStalenessMs: b.maxStalenessMs });
        const bad = results.findIndex((r) => r.reason === 'scope-not-in-tenant');
        if (bad >= 0) throw notInTenant(`checks[${bad}].scope`, b.checks[bad].scope);
        return c.json({ results }, 200);
      },
    );
    app.openapi(
      createRoute({ method: 'post', path: '/v1/tenants/{tenantId}/explain', tags, security: bearer, summary: 'Which assignment / group / grant, role and rule decided (never from the cache)', middleware: mw(P.check), request: { params: PTenant, body: jsonBody(ExplainBody) }, responses: { 200: jsonResponse(ExplanationSchema, 'The explanation'), ...errorResponses(400, 401, 403, 404) } }),
      async (c) => {
        const { tenantId } = c.req.valid('param');
        const b = c.req.valid('json');
        const e = await engine.explain({ tenantId, userId: b.userId, permission: b.permission, scope: b.scope, at: instant('at', b.at) });
        if (e.reason === 'scope-not-in-tenant') throw notInTenant('scope', b.scope);
        return c.json(e, 200);
      },
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/tenants/{tenantId}/users/{userId}/permissions', tags, security: bearer, summary: 'Effective permissions at a scope (default: the tenant): ALLOW patterns minus DENY', middleware: mw(P.check), request: { params: PUser, query: ScopeQuery.extend({ at: query('at') }) }, responses: { 200: jsonResponse(z.object({ scope: ScopeRefSchema, at: Timestamp, permissions: z.array(z.string()), denied: z.array(z.string()), reason: Reason.optional() }), 'The permissions'), ...errorResponses(400, 401, 403, 404) } }),
      async (c) => {
        const p = c.req.valid('param');
        const q = c.req.valid('query');
        const scope = scopeOf(q, tenantKind, p.tenantId, true)!;
        const r = await engine.listPermissions({ tenantId: p.tenantId, userId: p.userId, scope, at: instant('query.at', q.at) });
        if (r.reason === 'scope-not-in-tenant') throw notInTenant('query.scopeId', scope);
        return c.json(r, 200);
      },
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/tenants/{tenantId}/users/{userId}/scopes', tags, security: bearer, summary: 'Scopes where the user holds a permission (grant scopes and their descendants through the tree index), paginated', middleware: mw(P.check), request: { params: PUser, query: PaginationQuery.extend({ permission: z.string().min(1).max(200).openapi({ param: { name: 'permission', in: 'query' } }), at: query('at') }) }, responses: { 200: jsonResponse(listOf(z.object({ kind: z.string(), id: z.string(), name: z.string().optional() }), 'ScopePage'), 'A page'), ...errorResponses(400, 401, 403) } }),
      async (c) => {
        const p = c.req.valid('param');
        const q = c.req.valid('query');
        return c.json(await engine.listScopes({ tenantId: p.tenantId, userId: p.userId, permission: q.permission, at: instant('query.at', q.at), limit: q.limit, cursor: q.cursor }), 200);
      },
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/tenants/{tenantId}/users/{userId}/can-access-page', tags, security: bearer, summary: "002 canUserAccessPage(userId, locationId, page): a check of page:<page> at the scope (scopeKind optional when the hierarchy has one kind)", middleware: mw(P.check), request: { params: PUser, query: z.object({ page: z.string().min(1).max(64).openapi({ param: { name: 'page', in: 'query' } }), scopeId: z.string().min(1).max(128).openapi({ param: { name: 'scopeId', in: 'query' } }), scopeKind: query('scopeKind') }) }, responses: { 200: jsonResponse(z.object({ allowed: z.boolean() }), 'The answer'), ...errorResponses(400, 401, 403) } }),
      async (c) => {
        const p = c.req.valid('param');
        const q = c.req.valid('query');
        const allowed = await engine.canUserAccessPage(p.tenantId, p.userId, q.scopeKind ? { kind: q.scopeKind, id: q.scopeId } : q.scopeId, q.page);
        return c.json({ allowed }, 200);
      },
    );
  }

  // -- policies (platform) --
  {
    const tags = ['access'];
    const PPolicy = z.object({ policyId: param('policyId') });
    app.openapi(
      createRoute({ method: 'post', path: '/v1/policies', tags, security: bearer, summary: 'Record policy metadata (003; platform admin)', middleware: mw(P.platformAdmin), request: { body: jsonBody(PolicyCreate) }, responses: { 201: jsonResponse(PolicySchema, 'Created'), ...errorResponses(400, 401, 403, 409) } }),
      async (c) => {
        const pol = await policies.create(ctxOf(c), c.req.valid('json'));
        return json201(c, J(withEtag(c, pol)), `/v1/policies/${pol.id}`);
      },
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/policies', tags, security: bearer, summary: '003 policies by name prefix: one Query GLOBAL / begins_with POLICY_NAME#<prefix>', middleware: mw(P.policiesRead), request: { query: PaginationQuery.extend({ prefix: query('prefix') }) }, responses: { 200: jsonResponse(listOf(PolicySchema, 'PolicyPage'), 'A page'), ...errorResponses(400, 401, 403) } }),
      async (c) => c.json(J(await policies.list(c.req.valid('query'))), 200),
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/policies/by-name/{name}', tags, security: bearer, summary: '003 policy by exact name: one GetItem', middleware: mw(P.policiesRead), request: { params: z.object({ name: param('name') }) }, responses: { 200: jsonResponse(PolicySchema, 'The policy'), ...errorResponses(400, 401, 403, 404) } }),
      async (c) => c.json(J(withEtag(c, await policies.byName(c.req.valid('param').name))), 200),
    );
    app.openapi(
      createRoute({ method: 'get', path: '/v1/policies/{policyId}', tags, security: bearer, summary: '003 policy by id: one Query on GSI2 POLICY#<id>', middleware: mw(P.policiesRead), request: { params: PPolicy }, responses: { 200: jsonResponse(PolicySchema, 'The policy'), ...errorResponses(400, 401, 403, 404) } }),
      async (c) => c.json(J(withEtag(c, await policies.byId(c.req.valid('param').policyId))), 200),
    );
    app.openapi(
      createRoute({ method: 'patch', path: '/v1/policies/{policyId}', tags, security: bearer, summary: 'Rename / re-describe a policy (If-Match optional)', middleware: mw(P.platformAdmin), request: { params: PPolicy, headers: IfMatch, body: jsonBody(PolicyPatch) }, responses: { 200: jsonResponse(PolicySchema, 'The policy'), ...errorResponses(400, 401, 403, 404, 409, 412) } }),
      async (c) => c.json(J(withEtag(c, await policies.update(ctxOf(c), c.req.valid('param').policyId, c.req.valid('json'), ifMatchOf(c, false)))), 200),
    );
    app.openapi(
      createRoute({ method: 'delete', path: '/v1/policies/{policyId}', tags, security: bearer, summary: 'Delete policy metadata', middleware: mw(P.platformAdmin), request: { params: PPolicy }, responses: { 200: jsonResponse(z.object({ id: z.string(), deleted: z.boolean() }), 'Deleted'), ...errorResponses(401, 403, 404) } }),
      async (c) => c.json(await policies.remove(ctxOf(c), c.req.valid('param').policyId), 200),
    );
  }
};
