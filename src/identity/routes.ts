/**
 * HTTP routes of the identity domain: users, memberships, tenant grants. A user is visible in a
 * tenant that is its home or where it holds a grant; it is changed only through its home tenant.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { GatehouseError, notFound } from '../errors.ts';
import { authorize, ctxOf } from '../http/caller.ts';
import { bearer, errorResponses, json201, jsonBody, jsonResponse, listOf, PaginationQuery } from '../http/common.ts';
import type { AppHono, RouteModule } from '../http/deps.ts';
import { IfMatchHeader, ifMatch, KindQuery, OptionalIfMatchHeader, pathParam, precondition, ScopeParams, ScopeUserParams, setEtag, TenantParams, UserParams } from '../tenancy/http.ts';
import type { TenancyServices } from '../tenancy/index.ts';
import { PERMISSIONS as TENANCY_PERMISSIONS } from '../tenancy/routes.ts';
import type { IdentityServices } from './index.ts';
import {
  CreateUserInput,
  GrantInput,
  GrantSchema,
  IsoDate,
  MembershipSchema,
  SetMfaInput,
  SetPasswordInput,
  UpdateUserInput,
  UserSchema,
  UserStatus,
  UserWithMembershipsSchema,
} from './schema.ts';

export const PERMISSIONS = {
  usersRead: 'gatehouse:users:read',
  usersWrite: 'gatehouse:users:write',
  platformAdmin: TENANCY_PERMISSIONS.platformAdmin,
} as const;

const UserList = listOf(UserSchema, 'UserList');
const MembershipList = listOf(MembershipSchema, 'MembershipList');
const GrantList = listOf(GrantSchema, 'TenantGrantList');
const mw = (permission: string) => [authorize(permission)];
const t = ['identity'];

export function identityRoutes(s: { identity: IdentityServices; tenancy: TenancyServices }): RouteModule {
  const { users, memberships } = s.identity;
  const h = s.tenancy.hierarchy;

  /** The user as seen from `tenantId` (home tenant or grant), else 404. */
  const visible = async (tenantId: string, userId: string) => {
    const u = await users.findInTenant(tenantId, userId);
    if (!u) throw notFound('user', userId);
    return u;
  };

  return (app: AppHono) => {
    app.openapi(
      createRoute({
        method: 'post', path: '/v1/tenants/{tenantId}/users', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersWrite),
        summary: 'Create a user with this home tenant; e-mail, phone and username are unique (409 naming the field)',
        request: { params: TenantParams, body: jsonBody(CreateUserInput) },
        responses: { 201: jsonResponse(UserSchema, 'Created'), ...errorResponses(400, 401, 403, 404, 409, 415) },
      }),
      async (c) => {
        const { tenantId } = c.req.valid('param');
        const user = await users.create(ctxOf(c), tenantId, c.req.valid('json'));
        setEtag(c, user.version);
        return json201(c, user, `/v1/tenants/${tenantId}/users/${user.id}`);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}/users', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersRead),
        summary: 'Users of the tenant (GSI1), or the one with ?email= (e-mail item + user: strongly consistent, no GSI)',
        request: {
          params: TenantParams,
          query: PaginationQuery.extend({
            email: z.string().min(1).max(254).optional().openapi({ param: { name: 'email', in: 'query' } }),
            status: UserStatus.optional().openapi({ param: { name: 'status', in: 'query' } }),
          }),
        },
        responses: { 200: jsonResponse(UserList, 'A page of users'), ...errorResponses(400, 401, 403) },
      }),
      async (c) => {
        const { tenantId } = c.req.valid('param');
        const q = c.req.valid('query');
        if (q.email !== undefined) {
          const u = await users.getByEmail(q.email);
          const shown = u && (u.tenantId === tenantId || (await memberships.check(tenantId, u.id))) ? [u] : [];
          return c.json({ items: shown, cursor: null }, 200);
        }
        return c.json(await users.byTenant(tenantId, q), 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/users', tags: t, security: bearer, middleware: mw(PERMISSIONS.platformAdmin),
        summary: 'Users of every tenant by status, ordered by end date (one parallel wave over the sharded GSI3)',
        request: {
          query: PaginationQuery.extend({
            status: UserStatus.openapi({ param: { name: 'status', in: 'query' } }),
            endBefore: IsoDate.optional().openapi({ param: { name: 'endBefore', in: 'query' }, description: 'Only users whose end date is before this date' }),
          }),
        },
        responses: { 200: jsonResponse(UserList, 'A page of users'), ...errorResponses(400, 401, 403) },
      }),
      async (c) => {
        const q = c.req.valid('query');
        return c.json(await users.byStatus(q.status, q), 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}/users/{userId}', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersRead),
        summary: 'A user (one GetItem)',
        request: { params: UserParams },
        responses: { 200: jsonResponse(UserSchema, 'The user; ETag is its version'), ...errorResponses(401, 403, 404) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        const user = await visible(p.tenantId, p.userId);
        setEtag(c, user.version);
        return c.json(user, 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'patch', path: '/v1/tenants/{tenantId}/users/{userId}', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersWrite),
        summary: 'Update a user (home tenant only; If-Match required). Changing e-mail / phone / username moves its guard atomically',
        request: { params: UserParams, headers: IfMatchHeader, body: jsonBody(UpdateUserInput) },
        responses: { 200: jsonResponse(UserSchema, 'Updated'), ...errorResponses(400, 401, 403, 404, 409, 412, 415, 428) },
      }),
      async (c) => {
        const version = ifMatch(c);
        const p = c.req.valid('param');
        const user = await precondition(users.update(ctxOf(c), p.tenantId, p.userId, c.req.valid('json'), version));
        setEtag(c, user.version);
        return c.json(user, 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'delete', path: '/v1/tenants/{tenantId}/users/{userId}', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersWrite),
        summary: 'Delete a user and its unique identifiers (409 while it has memberships, grants or assignments; If-Match required)',
        request: { params: UserParams, headers: IfMatchHeader },
        responses: { 204: { description: 'Deleted' }, ...errorResponses(401, 403, 404, 409, 412, 428) },
      }),
      async (c) => {
        const version = ifMatch(c);
        const p = c.req.valid('param');
        await precondition(users.delete(ctxOf(c), p.tenantId, p.userId, version));
        return c.body(null, 204);
      },
    );
    app.openapi(
      createRoute({
        method: 'put', path: '/v1/tenants/{tenantId}/users/{userId}/password', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersWrite),
        summary: 'Set a password (stored only as a scrypt hash; never returned)',
        request: { params: UserParams, headers: OptionalIfMatchHeader, body: jsonBody(SetPasswordInput) },
        responses: { 204: { description: 'Set' }, ...errorResponses(400, 401, 403, 404, 412, 415) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        const user = await precondition(users.setPassword(ctxOf(c), p.tenantId, p.userId, c.req.valid('json'), ifMatch(c, false)));
        setEtag(c, user.version);
        return c.body(null, 204);
      },
    );
    app.openapi(
      createRoute({
        method: 'put', path: '/v1/tenants/{tenantId}/users/{userId}/mfa', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersWrite),
        summary: 'Enable MFA (a secret is stored only encrypted; never returned)',
        request: { params: UserParams, headers: OptionalIfMatchHeader, body: jsonBody(SetMfaInput) },
        responses: { 200: jsonResponse(UserSchema, 'Enabled'), ...errorResponses(400, 401, 403, 404, 412, 415) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        const user = await precondition(users.setMfa(ctxOf(c), p.tenantId, p.userId, c.req.valid('json'), ifMatch(c, false)));
        setEtag(c, user.version);
        return c.json(user, 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'delete', path: '/v1/tenants/{tenantId}/users/{userId}/mfa', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersWrite),
        summary: 'Disable MFA and erase its secret',
        request: { params: UserParams, headers: OptionalIfMatchHeader },
        responses: { 200: jsonResponse(UserSchema, 'Disabled'), ...errorResponses(401, 403, 404, 412) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        const user = await precondition(users.disableMfa(ctxOf(c), p.tenantId, p.userId, ifMatch(c, false)));
        setEtag(c, user.version);
        return c.json(user, 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}/users/{userId}/overview', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersRead),
        summary: 'A user with its scope memberships (e.g. workstream assignments): ONE Query of its partition',
        request: { params: UserParams, query: PaginationQuery.merge(KindQuery) },
        responses: { 200: jsonResponse(UserWithMembershipsSchema, 'The user and a page of memberships'), ...errorResponses(400, 401, 403, 404) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        const r = await users.withMemberships(p.userId, c.req.valid('query'));
        if (r.user && r.user.tenantId !== p.tenantId && !(await memberships.check(p.tenantId, p.userId))) throw notFound('user', p.userId);
        return c.json({ ...r, memberships: r.memberships.filter((m) => m.tenantId === p.tenantId) }, 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}/users/{userId}/memberships', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersRead),
        summary: "A user's memberships in this tenant (one Query of its partition; ?kind= narrows it to a kind)",
        request: { params: UserParams, query: PaginationQuery.merge(KindQuery) },
        responses: { 200: jsonResponse(MembershipList, 'A page of memberships'), ...errorResponses(400, 401, 403) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        return c.json(await memberships.ofUser(p.tenantId, p.userId, c.req.valid('query')), 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}/users/{userId}/tenants', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersRead),
        summary: "A user's tenant grants (one Query); from a tenant other than its home, only that tenant's grant",
        request: { params: UserParams, query: PaginationQuery },
        responses: { 200: jsonResponse(GrantList, 'A page of grants'), ...errorResponses(400, 401, 403, 404) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        const user = await visible(p.tenantId, p.userId);
        const page = await memberships.tenantsOf(p.userId, c.req.valid('query'));
        return c.json(user.tenantId === p.tenantId ? page : { items: page.items.filter((g) => g.tenantId === p.tenantId), cursor: page.cursor }, 200);
      },
    );

    // ---- scope memberships ----
    app.openapi(
      createRoute({
        method: 'put', path: '/v1/tenants/{tenantId}/scopes/{scopeId}/members/{userId}', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersWrite),
        summary: 'Make a user a member of a scope node (idempotent)',
        request: { params: ScopeUserParams, query: KindQuery },
        responses: { 201: jsonResponse(MembershipSchema, 'Added'), 200: jsonResponse(MembershipSchema, 'Already a member'), ...errorResponses(400, 401, 403, 404) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        const r = await memberships.add(ctxOf(c), p.tenantId, { id: p.scopeId, kind: c.req.valid('query').kind }, p.userId);
        return r.created ? c.json(r.membership, 201) : c.json(r.membership, 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'delete', path: '/v1/tenants/{tenantId}/scopes/{scopeId}/members/{userId}', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersWrite),
        summary: 'Remove a user from a scope node',
        request: { params: ScopeUserParams, query: KindQuery },
        responses: { 204: { description: 'Removed' }, ...errorResponses(400, 401, 403, 404) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        await memberships.remove(ctxOf(c), p.tenantId, { id: p.scopeId, kind: c.req.valid('query').kind }, p.userId);
        return c.body(null, 204);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}/scopes/{scopeId}/members', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersRead),
        summary: 'Members of a scope node (one Query with ?kind=)',
        request: { params: ScopeParams, query: PaginationQuery.merge(KindQuery) },
        responses: { 200: jsonResponse(MembershipList, 'A page of members'), ...errorResponses(400, 401, 403, 404) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        const q = c.req.valid('query');
        return c.json(await memberships.members(p.tenantId, { id: p.scopeId, kind: q.kind }, q), 200);
      },
    );

    // ---- tenant grants (003) ----
    const GrantParams = TenantParams.extend({ userId: pathParam('userId') });
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}/members', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersRead),
        summary: `Users granted access to this ${h.tenantKind} (one Query)`,
        request: { params: TenantParams, query: PaginationQuery },
        responses: { 200: jsonResponse(GrantList, 'A page of grants'), ...errorResponses(400, 401, 403) },
      }),
      async (c) => c.json(await memberships.grantsOf(c.req.valid('param').tenantId, c.req.valid('query')), 200),
    );
    app.openapi(
      createRoute({
        method: 'put', path: '/v1/tenants/{tenantId}/members/{userId}', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersWrite),
        summary: `Grant a user access to this ${h.tenantKind} with roles (creates the grant or replaces its roles)`,
        description:
          `A user of another ${h.tenantKind} is added only with its e-mail in the body (\`email\`, trimmed, case-insensitive): ` +
          'the caller proves it knows whom it adds, so a user id alone never reveals who it is. ' +
          `A user of this ${h.tenantKind}, or one already granted here, needs no e-mail; a given e-mail is always checked. ` +
          'A missing or wrong e-mail and an unknown user id give the same 404 naming `userId`, and nothing is written.',
        request: { params: GrantParams, body: jsonBody(GrantInput) },
        responses: { 201: jsonResponse(GrantSchema, 'Granted'), 200: jsonResponse(GrantSchema, 'Roles replaced'), ...errorResponses(400, 401, 403, 404, 409, 415) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        const r = await memberships.grant(ctxOf(c), p.tenantId, p.userId, c.req.valid('json'));
        setEtag(c, r.grant.version);
        return r.created ? c.json(r.grant, 201) : c.json(r.grant, 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}/members/{userId}', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersRead),
        summary: `A user's grant in this ${h.tenantKind} (one GetItem); 404 when it has none`,
        request: { params: GrantParams },
        responses: { 200: jsonResponse(GrantSchema, 'The grant'), ...errorResponses(401, 403, 404) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        const g = await memberships.check(p.tenantId, p.userId);
        if (!g) throw notFound('grant', p.userId);
        setEtag(c, g.version);
        return c.json(g, 200);
      },
    );
    app.openapi(
      createRoute({
        method: 'delete', path: '/v1/tenants/{tenantId}/members/{userId}', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersWrite),
        summary: `Remove a user's grant in this ${h.tenantKind}`,
        request: { params: GrantParams },
        responses: { 204: { description: 'Removed' }, ...errorResponses(401, 403, 404) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        await memberships.revoke(ctxOf(c), p.tenantId, p.userId);
        return c.body(null, 204);
      },
    );
    app.openapi(
      createRoute({
        method: 'get', path: '/v1/tenants/{tenantId}/grants/{grantId}', tags: t, security: bearer, middleware: mw(PERMISSIONS.usersRead),
        summary: 'A tenant grant by its id (one Query on GSI2; eventually consistent)',
        request: { params: TenantParams.extend({ grantId: pathParam('grantId') }) },
        responses: { 200: jsonResponse(GrantSchema, 'The grant'), ...errorResponses(401, 403, 404) },
      }),
      async (c) => {
        const p = c.req.valid('param');
        const g = await memberships.byId(p.grantId, p.tenantId);
        if (!g) throw new GatehouseError('NOT_FOUND', `grant ${p.grantId} not found`, { entity: 'grant', id: p.grantId });
        setEtag(c, g.version);
        return c.json(g, 200);
      },
    );
  };
}
