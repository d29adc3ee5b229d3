/**
 * The auth layer as one factory for the composition root:
 *
 *   const auth = await createAuth({ store, hierarchy, engine: access.engine, config: authConfigFromEnv() });
 *   setAuthorizer(auth.authorizer);
 *   routes.push(auth.routes);
 *   createApp({ ..., middleware: auth.middleware });
 *
 * Middleware order: authenticate → rate limit (per caller) → idempotency (POST) → If-Match 412 mapping.
 */
import type { MiddlewareHandler } from 'hono';
import { GatehouseError } from '../errors.ts';
import type { Store } from '../store/store.ts';
import type { Hierarchy } from '../tenancy/model.ts';
import { authenticate, bootstrapKeyAuthenticator, type Authenticator } from '../http/auth.ts';
import type { Authorizer } from '../http/caller.ts';
import { preconditions } from '../http/conventions.ts';
import type { AppEnv, RouteModule } from '../http/deps.ts';
import { idempotency } from '../http/idempotency.ts';
import { rateLimit, TokenBuckets } from '../http/ratelimit.ts';
import { createApiKeyService, type ApiKeyService } from './apikeys.ts';
import { createAuthorizer, type CheckEngine, type Decision, type Grantor } from './authorizer.ts';
import type { AuthConfig } from './config.ts';
import { createDevIssuer, jwtAuthenticator, type DevIssuer } from './jwt.ts';
import { apiKeyRoutes, devIssuerRoutes } from './routes.ts';
import type { Principal } from '../http/caller.ts';

export interface AuthOptions {
  store: Store;
  hierarchy: Pick<Hierarchy, 'T' | 'tenantKind'>;
  /** The decision engine (`createAccess(...).engine`); without it only the bootstrap key and API keys are authorized. */
  engine?: CheckEngine;
  config?: AuthConfig;
  now?: () => Date;
  /** Share one development issuer between instances (tests, bench); default: a new one when enabled. */
  devIssuer?: DevIssuer;
}

export interface Auth {
  authenticators: Authenticator[];
  apiKeys: ApiKeyService;
  /** For `setAuthorizer(...)`. */
  authorizer: Authorizer;
  /** The decision with its reason (Lambda authorizer, tests). */
  decide(p: Principal, permission: string, tenantId: string | undefined): Promise<Decision>;
  /** What a principal may put into an API key at a tenant (`apiKeys.create(…, { grantorAt })`). */
  grantorAt(p: Principal, tenantId: string): Promise<Grantor>;
  /** Authenticates a bearer credential (JWT or API key): a principal, or throws UNAUTHENTICATED / RETRYABLE. */
  authenticateCredential(credential: string): Promise<Principal>;
  /** API-key routes (+ the development issuer's when enabled). */
  routes: RouteModule;
  /** Global middleware, in order: authenticate, rate limit, idempotency, preconditions. */
  middleware: MiddlewareHandler<AppEnv>[];
  /** Present only when the development issuer is enabled. */
  devIssuer?: DevIssuer;
  rateLimiter?: TokenBuckets;
}

export async function createAuth(o: AuthOptions): Promise<Auth> {
  const config = o.config ?? {};
  if (config.devIssuer && config.production) throw new Error('The development token issuer cannot be enabled in production');
  const apiKeys = createApiKeyService({ store: o.store, hierarchy: o.hierarchy, now: o.now });
  const devIssuer = config.devIssuer ? (o.devIssuer ?? (await createDevIssuer())) : undefined;
  const issuers = [...(config.jwt ?? []), ...(devIssuer ? [devIssuer.config] : [])];

  const authenticators: Authenticator[] = [];
  if (config.adminApiKey) authenticators.push(bootstrapKeyAuthenticator(config.adminApiKey));
  authenticators.push((credential) => apiKeys.verify(credential));
  if (issuers.length) authenticators.push(jwtAuthenticator(issuers));

  const { authorizer, decide, grantorAt } = createAuthorizer({ store: o.store, hierarchy: o.hierarchy, engine: o.engine, platformTenantId: config.platformTenantId, maxStalenessMs: config.authorizationMaxStalenessMs });
  const rateLimiter = config.rateLimit ? new TokenBuckets(config.rateLimit) : undefined;

  const middleware: MiddlewareHandler<AppEnv>[] = [
    authenticate(authenticators),
    ...(rateLimiter ? [rateLimit(rateLimiter)] : []),
    idempotency({ store: o.store, ttlSeconds: config.idempotencyTtlSeconds, now: o.now }),
    preconditions(),
  ];

  const keyRoutes = apiKeyRoutes({ apiKeys, grantorAt });
  const routes: RouteModule = (app) => {
    keyRoutes(app);
    if (devIssuer) devIssuerRoutes(devIssuer)(app);
  };

  async function authenticateCredential(credential: string): Promise<Principal> {
    for (const a of authenticators) {
      const p = await a(credential);
      if (p) return p;
    }
    throw new GatehouseError('UNAUTHENTICATED', 'The bearer credential is not valid');
  }

  return { authenticators, apiKeys, authorizer, decide, grantorAt, authenticateCredential, routes, middleware, devIssuer, rateLimiter };
}

export { authConfigFromEnv, type AuthConfig, type JwtIssuerConfig, type RateLimitConfig } from './config.ts';
export { createDevIssuer, jwtAuthenticator, verifyJwt, DEV_ISSUER, DEV_AUDIENCE, type DevIssuer } from './jwt.ts';
export { createApiKeyService, parseApiKey, type ApiKey, type ApiKeyService } from './apikeys.ts';
export { createAuthorizer, rulesAllow, rulesBeyond, type CheckEngine, type Grantor } from './authorizer.ts';
export { AUTH_PERMISSIONS } from './routes.ts';
