/** HTTP routes of API keys, and of the local development token issuer (only when enabled). */
import { createRoute, z } from '@hono/zod-openapi';
import { authorize, ctxOf } from '../http/caller.ts';
import { bearer, errorResponses, json201, jsonBody, jsonResponse, listOf, PaginationQuery } from '../http/common.ts';
import { IfMatchHeader, ifMatch, withEtag } from '../http/conventions.ts';
import type { RouteModule } from '../http/deps.ts';
import { PLATFORM_ADMIN_PERMISSION } from '../access/system.ts';
import type { ApiKeyService } from './apikeys.ts';
import type { Grantor } from './authorizer.ts';
import type { Principal } from '../http/caller.ts';
import type { DevIssuer } from './jwt.ts';

export const AUTH_PERMISSIONS = { apiKeysRead: 'gatehouse:apikeys:read', apiKeysWrite: 'gatehouse:apikeys:write', devTokens: PLATFORM_ADMIN_PERMISSION } as const;

const Timestamp = z.string().openapi({ example: '2025-01-31T12:00:00.000Z' });
const param = (name: string) => z.string().min(1).max(128).openapi({ param: { name, in: 'path' } });
const PTenant = z.object({ tenantId: param('tenantId') });
const PKey = PTenant.extend({ keyId: param('keyId') });

const ApiKeySchema = z
  .object({
    id: z.string().openapi({ example: '01JB2ZCN9Q8M4X1T5V7W3Y6Z0A' }),
    tenantId: z.string(),
    roleId: z.string(),
    name: z.string(),
    prefix: z.string().openapi({ description: 'gh_<id>: identifies the key without its secret', example: 'gh_01JB2ZCN9Q8M4X1T5V7W3Y6Z0A' }),
    status: z.enum(['active', 'revoked']),
    createdBy: z.string(),
    expiresAt: Timestamp.optional(),
    revokedAt: Timestamp.optional(),
    revokedBy: z.string().optional(),
    lastUsedAt: Timestamp.optional().openapi({ description: 'Accurate to about a minute' }),
    version: z.number().int(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi('ApiKey');
const ApiKeyCreated = ApiKeySchema.extend({
  secret: z.string().openapi({ description: 'The full key (gh_<id>_<secret>): shown ONCE, only its SHA-256 is stored. Send it as Authorization: Bearer <secret>.' }),
}).openapi('ApiKeyCreated');
const ApiKeyCreate = z
  .object({
    name: z.string().min(1).max(100).openapi({ example: 'billing-sync' }),
    roleId: z.string().min(1).max(128).openapi({
      description: 'A role of this tenant or a global role (not platform-admin) that grants nothing the caller does not hold in this tenant (403 lists what is missing)',
      example: 'tenant-auditor',
    }),
    expiresAt: z.string().optional().openapi({ description: 'ISO date-time after which the key is refused' }),
  })
  .strict()
  .openapi('ApiKeyCreate');

export const apiKeyRoutes = (d: { apiKeys: ApiKeyService; grantorAt: (p: Principal, tenantId: string) => Promise<Grantor> }): RouteModule => (app) => {
  const tags = ['identity'];
  app.openapi(
    createRoute({
      method: 'post', path: '/v1/tenants/{tenantId}/api-keys', tags, security: bearer,
      summary:
        'Create an API key bound to this tenant and a role that grants nothing beyond the caller\'s own permissions here; the secret is in the response only (send Idempotency-Key to retry safely)',
      middleware: [authorize(AUTH_PERMISSIONS.apiKeysWrite)] as const,
      request: { params: PTenant, body: jsonBody(ApiKeyCreate) },
      responses: { 201: jsonResponse(ApiKeyCreated, 'The key, with its secret (shown once)'), ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
    }),
    async (c) => {
      const { tenantId } = c.req.valid('param');
      const ctx = ctxOf(c);
      const principal = c.get('principal')!;
      // The caller rule: the key's role must grant nothing the caller does not hold in this tenant.
      const { apiKey, secret } = await d.apiKeys.create(ctx, tenantId, c.req.valid('json'), { grantorAt: (tid) => d.grantorAt(principal, tid) });
      c.header('cache-control', 'no-store');
      return json201(c, { ...withEtag(c, apiKey), secret }, `/v1/tenants/${tenantId}/api-keys/${apiKey.id}`);
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/api-keys', tags, security: bearer, summary: "The tenant's API keys (active and revoked; never their secrets)",
      middleware: [authorize(AUTH_PERMISSIONS.apiKeysRead)] as const,
      request: { params: PTenant, query: PaginationQuery },
      responses: { 200: jsonResponse(listOf(ApiKeySchema, 'ApiKeyPage'), 'A page of keys'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => c.json(await d.apiKeys.list(c.req.valid('param').tenantId, c.req.valid('query')), 200),
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/api-keys/{keyId}', tags, security: bearer, summary: 'An API key (ETag: its version)',
      middleware: [authorize(AUTH_PERMISSIONS.apiKeysRead)] as const,
      request: { params: PKey },
      responses: { 200: jsonResponse(ApiKeySchema, 'The key'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return c.json(withEtag(c, await d.apiKeys.get(p.tenantId, p.keyId)), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'delete', path: '/v1/tenants/{tenantId}/api-keys/{keyId}', tags, security: bearer,
      summary: 'Revoke an API key: the next request with it is refused on every instance (If-Match optional)',
      middleware: [authorize(AUTH_PERMISSIONS.apiKeysWrite)] as const,
      request: { params: PKey, headers: IfMatchHeader },
      responses: { 200: jsonResponse(ApiKeySchema, 'The revoked key'), ...errorResponses(401, 403, 404, 412) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return c.json(withEtag(c, await d.apiKeys.revoke(ctxOf(c), p.tenantId, p.keyId, ifMatch(c))), 200);
    },
  );
};

const DevTokenCreate = z
  .object({
    userId: z.string().min(1).max(128).openapi({ description: 'The Gatehouse user id to put in `sub`' }),
    tenantId: z.string().min(1).max(128).optional().openapi({ description: 'Copied to the tenant_id claim (informational)' }),
    ttlSeconds: z.number().int().min(1).max(86_400).optional(),
  })
  .strict()
  .openapi('DevTokenCreate');
const DevToken = z.object({ token: z.string(), tokenType: z.literal('Bearer'), expiresAt: Timestamp, issuer: z.string(), audience: z.string() }).openapi('DevToken');

/**
 * The local development issuer: `POST /v1/dev/tokens` (platform admin, e.g. the development admin
 * key) signs a JWT for any user; `GET /.well-known/jwks.json` publishes its public key. Mounted
 * only when GATEHOUSE_DEV_ISSUER=true outside production.
 */
export const devIssuerRoutes = (issuer: DevIssuer): RouteModule => (app) => {
  app.openapi(
    createRoute({
      method: 'post', path: '/v1/dev/tokens', tags: ['system'], security: bearer,
      summary: 'DEVELOPMENT ONLY: sign a JWT for a user (exists only when GATEHOUSE_DEV_ISSUER=true)',
      middleware: [authorize(AUTH_PERMISSIONS.devTokens)] as const,
      request: { body: jsonBody(DevTokenCreate) },
      responses: { 201: jsonResponse(DevToken, 'A signed token'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => {
      const b = c.req.valid('json');
      const { token, expiresAt } = await issuer.issue({ sub: b.userId, tenantId: b.tenantId, ttlSeconds: b.ttlSeconds });
      c.header('cache-control', 'no-store');
      return json201(c, { token, tokenType: 'Bearer' as const, expiresAt, issuer: issuer.config.issuer, audience: String(issuer.config.audience) });
    },
  );
  app.get('/.well-known/jwks.json', async (c) => c.json(await issuer.jwks()));
};
