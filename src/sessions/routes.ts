/** HTTP routes of a user's login sessions and tokens. */
import { createRoute, z } from '@hono/zod-openapi';
import { authorize, ctxOf } from '../http/caller.ts';
import { bearer, errorResponses, json201, jsonBody, jsonResponse, listOf, PaginationQuery } from '../http/common.ts';
import type { RouteModule } from '../http/deps.ts';
import { noContent, pathParam, PathTenant, Timestamp } from '../entitlements/http.ts';
import type { SessionService } from './service.ts';

export const SESSION_PERMISSIONS = { read: 'gatehouse:sessions:read', write: 'gatehouse:sessions:write' } as const;

const Stamps = { version: z.number().int(), createdAt: Timestamp, updatedAt: Timestamp };

const SessionSchema = z
  .object({
    id: z.string(),
    userId: z.string(),
    tenantId: z.string(),
    ssoProvider: z.string().optional(),
    sessionStart: Timestamp,
    ip: z.string().optional(),
    userAgent: z.string().optional(),
    deviceInfo: z.record(z.string(), z.unknown()).optional(),
    mfaVerified: z.boolean(),
    location: z.string().optional(),
    status: z.enum(['active', 'revoked']),
    revokedAt: Timestamp.optional(),
    revokedBy: z.string().optional(),
    expiresAt: z.number().int().openapi({ description: 'TTL, epoch seconds (90 days)' }),
    ...Stamps,
  })
  .openapi('LoginSession');
const SessionCreate = z
  .object({
    ssoProvider: z.string().max(100).optional(),
    ip: z.string().max(64).optional(),
    userAgent: z.string().max(512).optional(),
    deviceInfo: z.record(z.string(), z.unknown()).optional(),
    mfaVerified: z.boolean().optional(),
    location: z.string().max(200).optional(),
  })
  .strict()
  .openapi('SessionCreate');
const TokenSchema = z
  .object({
    id: z.string(),
    userId: z.string(),
    tenantId: z.string(),
    tokenType: z.enum(['refresh', 'api']),
    name: z.string().optional(),
    sessionId: z.string().optional(),
    deviceId: z.string().optional(),
    issuedAt: Timestamp,
    expiresAt: z.number().int().openapi({ description: 'TTL, epoch seconds (at most 30 days)' }),
    revoked: z.boolean(),
    revokedAt: Timestamp.optional(),
    revokedBy: z.string().optional(),
    ...Stamps,
  })
  .openapi('AuthToken');
const TokenCreated = TokenSchema.extend({ secret: z.string().openapi({ description: 'Shown once; only its SHA-256 hash is stored' }) }).openapi('AuthTokenCreated');
const TokenCreate = z
  .object({
    tokenType: z.enum(['refresh', 'api']),
    name: z.string().max(200).optional(),
    sessionId: z.string().max(64).optional(),
    deviceId: z.string().max(200).optional(),
    ttlDays: z.number().positive().max(30).optional(),
  })
  .strict()
  .openapi('AuthTokenCreate');

const UserParams = PathTenant.extend({ userId: pathParam('userId') });

export const sessionsRoutes = (d: { sessions: SessionService }): RouteModule => (app) => {
  const tags = ['identity'];
  app.openapi(
    createRoute({
      method: 'post', path: '/v1/tenants/{tenantId}/users/{userId}/sessions', tags, security: bearer, summary: 'Record a login session (TTL 90 days)',
      middleware: [authorize(SESSION_PERMISSIONS.write)] as const,
      request: { params: UserParams, body: jsonBody(SessionCreate) },
      responses: { 201: jsonResponse(SessionSchema, 'The session'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return json201(c, await d.sessions.createSession(ctxOf(c), p.tenantId, p.userId, c.req.valid('json')));
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/users/{userId}/sessions', tags, security: bearer,
      summary: "A user's live sessions, newest first (expired — even if TTL has not deleted them yet — and revoked ones are gone)",
      middleware: [authorize(SESSION_PERMISSIONS.read)] as const,
      request: { params: UserParams, query: PaginationQuery },
      responses: { 200: jsonResponse(listOf(SessionSchema, 'SessionPage'), 'A page of sessions'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return c.json(await d.sessions.sessions(p.tenantId, p.userId, c.req.valid('query')), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/users/{userId}/sessions/{sessionId}', tags, security: bearer, summary: 'A live session',
      middleware: [authorize(SESSION_PERMISSIONS.read)] as const,
      request: { params: UserParams.extend({ sessionId: pathParam('sessionId') }) },
      responses: { 200: jsonResponse(SessionSchema, 'The session'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return c.json(await d.sessions.getSession(p.tenantId, p.userId, p.sessionId), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'delete', path: '/v1/tenants/{tenantId}/users/{userId}/sessions/{sessionId}', tags, security: bearer, summary: 'Revoke a session',
      middleware: [authorize(SESSION_PERMISSIONS.write)] as const,
      request: { params: UserParams.extend({ sessionId: pathParam('sessionId') }) },
      responses: { ...noContent, ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      await d.sessions.revokeSession(ctxOf(c), p.tenantId, p.userId, p.sessionId);
      return c.body(null, 204);
    },
  );
  app.openapi(
    createRoute({
      method: 'post', path: '/v1/tenants/{tenantId}/users/{userId}/sessions/revoke-all', tags, security: bearer,
      summary: 'Revoke every session and refresh token of the user issued until now (one write, whatever their number)',
      middleware: [authorize(SESSION_PERMISSIONS.write)] as const,
      request: { params: UserParams },
      responses: { 200: jsonResponse(z.object({ revokedBefore: Timestamp }), 'Sessions started before this instant are revoked'), ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return c.json(await d.sessions.revokeAll(ctxOf(c), p.tenantId, p.userId), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'post', path: '/v1/tenants/{tenantId}/users/{userId}/tokens', tags, security: bearer, summary: 'Issue a refresh or API token (TTL ≤ 30 days; the secret is shown once)',
      middleware: [authorize(SESSION_PERMISSIONS.write)] as const,
      request: { params: UserParams, body: jsonBody(TokenCreate) },
      responses: { 201: jsonResponse(TokenCreated, 'The token and its secret'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      c.header('cache-control', 'no-store');
      return json201(c, await d.sessions.createToken(ctxOf(c), p.tenantId, p.userId, c.req.valid('json')));
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/users/{userId}/tokens', tags, security: bearer, summary: "A user's live tokens, newest first (never their secrets)",
      middleware: [authorize(SESSION_PERMISSIONS.read)] as const,
      request: { params: UserParams, query: PaginationQuery },
      responses: { 200: jsonResponse(listOf(TokenSchema, 'AuthTokenPage'), 'A page of tokens'), ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return c.json(await d.sessions.tokens(p.tenantId, p.userId, c.req.valid('query')), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'delete', path: '/v1/tenants/{tenantId}/users/{userId}/tokens/{tokenId}', tags, security: bearer, summary: 'Revoke a token',
      middleware: [authorize(SESSION_PERMISSIONS.write)] as const,
      request: { params: UserParams.extend({ tokenId: pathParam('tokenId') }) },
      responses: { ...noContent, ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      await d.sessions.revokeToken(ctxOf(c), p.tenantId, p.userId, p.tokenId);
      return c.body(null, 204);
    },
  );
};
