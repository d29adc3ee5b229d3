/**
 * The caller of a request and what every route declares it needs. Authentication sets
 * `principal`; each /v1 route declares the Gatehouse permission it requires and the tenant it acts
 * on (always from the path, never from the body) through `authorize(...)`.
 *
 * The decision is delegated to `Authorizer`, so the admin API is authorized by Gatehouse's own
 * engine (dogfooding) once it is wired in by the composition root.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { Actor, RequestContext } from '../context.ts';
import { GatehouseError } from '../errors.ts';
import type { AppEnv } from './deps.ts';

export interface Principal {
  actor: Actor;
  /** The bootstrap key and platform-admin grants: may act on every tenant. */
  platformAdmin: boolean;
  /** How the caller authenticated (absent: set by an older authenticator). */
  kind?: 'bootstrap' | 'jwt' | 'apiKey';
  /** API keys: the role the key holds in `actor.tenantId` (the key's only tenant). */
  roleId?: string;
}

declare module './deps.ts' {
  interface AppVariables {
    principal?: Principal;
    authorizer?: Authorizer;
  }
}

/**
 * Decides whether a principal may use a permission (e.g. `gatehouse:users:write`) in a tenant;
 * synchronously when the answer needs no read (bounded staleness, platform admins).
 */
export type Authorizer = (principal: Principal, permission: string, tenantId: string | undefined) => boolean | Promise<boolean>;

/** The audit/request context of the current request. */
export function ctxOf(c: Context<AppEnv>): RequestContext {
  const p = c.get('principal');
  if (!p) throw new GatehouseError('UNAUTHENTICATED', 'Authentication is required: send Authorization: Bearer <JWT or API key>');
  return {
    actor: p.actor,
    requestId: c.get('requestId'),
    ip: c.req.header('x-forwarded-for')?.split(',')[0]?.trim() || undefined,
    userAgent: c.req.header('user-agent') ?? undefined,
  };
}

/** Fallback for apps built without one: only platform admins pass. */
const platformAdminsOnly: Authorizer = (p) => p.platformAdmin;
let fallbackAuthorizer: Authorizer = platformAdminsOnly;

/** Installed by the composition root once the decision engine exists. */
export function setAuthorizer(a: Authorizer) {
  fallbackAuthorizer = a;
}

/**
 * Route middleware: the caller must be authenticated and hold `permission` in the tenant named by
 * the `tenantId` path parameter (or platform-wide when the route has none).
 */
export function authorize(permission: string): MiddlewareHandler<AppEnv> {
  const forbidden = (tenantId: string | undefined) => new GatehouseError('FORBIDDEN', `This caller lacks ${permission}${tenantId ? ` in tenant ${tenantId}` : ''}`, { permission });
  const mw: MiddlewareHandler<AppEnv> = (c, next) => {
    const p = c.get('principal');
    if (!p) throw new GatehouseError('UNAUTHENTICATED', 'Authentication is required: send Authorization: Bearer <JWT or API key>');
    const tenantId = c.req.param('tenantId');
    // Each app carries its own authorizer (several Gatehouse instances may share a process).
    const allowed = (c.get('authorizer') ?? fallbackAuthorizer)(p, permission, tenantId);
    if (allowed === true) return next();
    if (allowed === false) throw forbidden(tenantId);
    return allowed.then((ok) => {
      if (!ok) throw forbidden(tenantId);
      return next();
    });
  };
  // The isolation suite and the Lambda authorizer read the declared permission from here.
  (mw as MiddlewareHandler<AppEnv> & { permission?: string }).permission = permission;
  return mw;
}
