/**
 * Authentication: turns `Authorization: Bearer <credential>` into a Principal. Each credential
 * kind is an `Authenticator`; the first that recognizes the credential decides (and may reject
 * it). Public routes (/health, /openapi.json, /docs, /.well-known) skip this. Credentials are
 * never logged (the access log has the path only; the logger redacts `authorization`).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { GatehouseError } from '../errors.ts';
import type { Principal } from './caller.ts';
import type { AppEnv } from './deps.ts';

/** Returns a principal, `undefined` when the credential is not of its kind, or throws UNAUTHENTICATED. */
export type Authenticator = (credential: string) => Promise<Principal | undefined>;

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** The bootstrap platform-admin key (GATEHOUSE_ADMIN_API_KEY): compared in constant time. */
export function bootstrapKeyAuthenticator(adminApiKey: string): Authenticator {
  const expected = sha256(adminApiKey);
  return async (credential) =>
    timingSafeEqual(sha256(credential), expected) ? { actor: { id: 'bootstrap-admin', type: 'apiKey' }, platformAdmin: true, kind: 'bootstrap' } : undefined;
}

const PUBLIC = /^\/(health|openapi\.json|docs|\.well-known)(\/|$)/;

export function authenticate(authenticators: Authenticator[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (PUBLIC.test(c.req.path) || c.req.method === 'OPTIONS') return next();
    const header = c.req.header('authorization') ?? '';
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) throw new GatehouseError('UNAUTHENTICATED', 'Send Authorization: Bearer <JWT or API key>');
    for (const a of authenticators) {
      const principal = await a(m[1]);
      if (principal) {
        c.set('principal', principal);
        return next();
      }
    }
    throw new GatehouseError('UNAUTHENTICATED', 'The bearer credential is not valid');
  };
}
