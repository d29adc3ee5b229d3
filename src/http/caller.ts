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

/** Decides whether a principal may use a permission (e.g. `gatehouse:users:write`) in a tenant. */
export type Authorizer = (principal: Principal, permission: string, tenantId: string | undefined) => Promise<boolean>;

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
const platformAdminsOnly: Authorizer = async (p) => p.platformAdmin;
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
  const mw: MiddlewareHandler<AppEnv> = async (c, next) => {
    const p = c.get('principal');
    if (!p) throw new GatehouseError('UNAUTHENTICATED', 'Authentication is required: send Authorization: Bearer <JWT or API key>');
    const tenantId = c.req.param('tenantId');
    // Each app carries its own authorizer (several Gatehouse instances may share a process).
    const authorizer = c.get('authorizer') ?? fallbackAuthorizer;
    if (!(await authorizer(p, permission, tenantId))) {
      throw new GatehouseError('FORBIDDEN', `This caller lacks ${permission}${tenantId ? ` in tenant ${tenantId}` : ''}`, { permission });
    }
    await next();
  };
  // The isolation suite and the Lambda authorizer read the declared permission from here.
  (mw as MiddlewareHandler<AppEnv> & { permission?: string }).permission = permission;
  return mw;
}
