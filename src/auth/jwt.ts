/**
 * Bearer JWTs, verified with jose against a trusted issuer's JWKS URL or static public key.
 * Enforced: signature, the issuer's algorithm allow-list (asymmetric only — `alg: none` and
 * HS256-signed-with-the-public-key confusion are refused before any key is used), `iss`, `aud`,
 * `exp` (required), `nbf`, and a `sub` (the Gatehouse user id). A JWKS endpoint that cannot be
 * reached is a 503 (retry), not a 401.
 */
import { createPublicKey, KeyObject } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors, generateKeyPair, jwtVerify, SignJWT, exportJWK, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import { ulid } from 'ulid';
import { GatehouseError } from '../errors.ts';
import type { Authenticator } from '../http/auth.ts';
import type { Principal } from '../http/caller.ts';
import { ASYMMETRIC_ALGORITHMS, type JwtAlgorithm, type JwtIssuerConfig } from './config.ts';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
export const looksLikeJwt = (credential: string) => JWT_SHAPE.test(credential);

const DEFAULT_ALGORITHMS: JwtAlgorithm[] = ['RS256', 'ES256'];

type VerifyKey = KeyObject | ReturnType<typeof createRemoteJWKSet>;

interface Trusted {
  cfg: JwtIssuerConfig;
  algorithms: JwtAlgorithm[];
  key: VerifyKey;
}

function staticKey(k: NonNullable<JwtIssuerConfig['publicKey']>): KeyObject {
  if (typeof k === 'string') {
    const text = k.trim();
    if (text.startsWith('{')) return createPublicKey({ key: JSON.parse(text), format: 'jwk' });
    return createPublicKey(text.replace(/\\n/g, '\n'));
  }
  if (k instanceof KeyObject) return k;
  if (typeof CryptoKey !== 'undefined' && k instanceof CryptoKey) return KeyObject.from(k);
  return createPublicKey({ key: k as never, format: 'jwk' });
}

/** Validates an issuer's settings up front: a misconfiguration fails at start, not per request. */
export function trustIssuer(cfg: JwtIssuerConfig): Trusted {
  if (!cfg.issuer) throw new Error('A JWT issuer needs `issuer`');
  if (!cfg.audience || (Array.isArray(cfg.audience) && cfg.audience.length === 0)) throw new Error(`JWT issuer ${cfg.issuer}: set the audience`);
  const algorithms = cfg.algorithms ?? DEFAULT_ALGORITHMS;
  for (const alg of algorithms) {
    if (!(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(alg)) {
      throw new Error(`JWT issuer ${cfg.issuer}: algorithm ${alg} is not allowed (asymmetric algorithms only: ${ASYMMETRIC_ALGORITHMS.join(', ')})`);
    }
  }
  if (!cfg.jwksUrl === !cfg.publicKey) throw new Error(`JWT issuer ${cfg.issuer}: set exactly one of jwksUrl and publicKey`);
  const key: VerifyKey = cfg.jwksUrl ? createRemoteJWKSet(new URL(cfg.jwksUrl), { timeoutDuration: 3000, cooldownDuration: 30_000 }) : staticKey(cfg.publicKey!);
  if (!cfg.jwksUrl && (key as KeyObject).type !== 'public') throw new Error(`JWT issuer ${cfg.issuer}: publicKey must be a public key`);
  return { cfg, algorithms, key };
}

const unauthenticated = (why: string) => new GatehouseError('UNAUTHENTICATED', `The bearer token was rejected: ${why}`);

/** Maps jose's failures to a reason safe to show (never the token). */
function rejection(err: unknown): GatehouseError {
  if (err instanceof errors.JWTExpired) return unauthenticated('it has expired');
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf' || err.claim === 'iat') return unauthenticated('it is not valid yet');
    if (err.claim === 'iss') return unauthenticated('wrong issuer');
    if (err.claim === 'aud') return unauthenticated('wrong audience');
    return unauthenticated(`claim ${err.claim} is missing or invalid`);
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return unauthenticated('its algorithm is not allowed');
  if (err instanceof errors.JWSSignatureVerificationFailed) return unauthenticated('bad signature');
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) return unauthenticated('no trusted key matches it');
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) {
    return new GatehouseError('RETRYABLE', 'The token issuer\'s keys could not be fetched; retry', {}, { cause: err });
  }
  if (err instanceof errors.JOSEError) return unauthenticated('it is malformed');
  // fetch failures of the JWKS (network) are transient.
  if (err instanceof TypeError && /fetch/i.test(err.message)) return new GatehouseError('RETRYABLE', 'The token issuer\'s keys could not be fetched; retry', {}, { cause: err });
  return unauthenticated('it could not be verified');
}

/** Verifies a JWT against the trusted issuers (chosen by its unverified `iss`, then verified). */
export async function verifyJwt(token: string, trusted: Trusted[]): Promise<Principal> {
  let iss: string | undefined;
  let alg: string | undefined;
  try {
    iss = decodeJwt(token).iss;
    alg = decodeProtectedHeader(token).alg;
  } catch {
    throw unauthenticated('it is malformed');
  }
  // Refused before any key is looked at, whatever the issuer.
  if (!alg || alg === 'none' || !(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(alg)) throw unauthenticated('its algorithm is not allowed');
  const t = trusted.find((x) => x.cfg.issuer === iss);
  if (!t) throw unauthenticated('wrong issuer');
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, t.key as KeyObject, {
      issuer: t.cfg.issuer,
      audience: t.cfg.audience,
      algorithms: t.algorithms,
      clockTolerance: t.cfg.clockToleranceSeconds ?? 30,
      requiredClaims: ['exp', 'sub'],
      ...(t.cfg.maxTokenAgeSeconds ? { maxTokenAge: t.cfg.maxTokenAgeSeconds } : {}),
    }));
  } catch (err) {
    throw rejection(err);
  }
  if (typeof payload.sub !== 'string' || !payload.sub || payload.sub.length > 128) throw unauthenticated('claim sub is missing or invalid');
  const tenantClaim = payload[t.cfg.tenantClaim ?? 'tenant_id'];
  return {
    actor: { id: payload.sub, type: 'user', ...(typeof tenantClaim === 'string' ? { tenantId: tenantClaim } : {}) },
    platformAdmin: false,
    kind: 'jwt',
  };
}

/** An Authenticator for JWT-shaped credentials; other credentials are left to the next one. */
export function jwtAuthenticator(issuers: JwtIssuerConfig[], o: { cacheEntries?: number } = {}): Authenticator {
  const trusted = issuers.map(trustIssuer);
  // A verified token is a pure function of its bytes until it expires (JWTs are not revocable
  // here; revocation is of the grants behind them, which every request still checks). Cache
  // successes for at most 60 s and never past `exp`; failures are never cached.
  const cache = new LRUCache<string, { p: Principal; until: number }>({ max: o.cacheEntries ?? 10_000 });
  return async (credential) => {
    if (!looksLikeJwt(credential)) return undefined;
    const hit = cache.get(credential);
    const now = Date.now();
    if (hit && hit.until > now) return hit.p;
    const p = await verifyJwt(credential, trusted);
    const exp = (decodeJwt(credential).exp ?? 0) * 1000;
    cache.set(credential, { p, until: Math.min(exp, now + 60_000) });
    return p;
  };
}

// ---- local development issuer ----------------------------------------------------------------------

export interface DevIssuer {
  /** Trust this in the JWT authenticator. */
  config: JwtIssuerConfig;
  /** The public key as a JWK (served at /v1/dev/jwks.json when enabled). */
  jwks(): Promise<{ keys: Record<string, unknown>[] }>;
  /** Signs a token for a Gatehouse user id. */
  issue(input: { sub: string; tenantId?: string; ttlSeconds?: number; audience?: string }): Promise<{ token: string; expiresAt: string }>;
}

export const DEV_ISSUER = 'urn:gatehouse:dev-issuer';
export const DEV_AUDIENCE = 'gatehouse';

/**
 * A development token issuer: a fresh ES256 key pair per process. Only created when explicitly
 * enabled (GATEHOUSE_DEV_ISSUER=true, refused in production); tests use it to act as users.
 */
export async function createDevIssuer(opts: { issuer?: string; audience?: string } = {}): Promise<DevIssuer> {
  const issuer = opts.issuer ?? DEV_ISSUER;
  const audience = opts.audience ?? DEV_AUDIENCE;
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = ulid();
  return {
    config: { issuer, audience, publicKey, algorithms: ['ES256'] },
    jwks: async () => ({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] }),
    async issue({ sub, tenantId, ttlSeconds = 3600, audience: aud }) {
      const now = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ ...(tenantId ? { tenant_id: tenantId } : {}) })
        .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(aud ?? audience)
        .setSubject(sub)
        .setIssuedAt(now)
        .setExpirationTime(now + ttlSeconds)
        .setJti(ulid())
        .sign(privateKey);
      return { token, expiresAt: new Date((now + ttlSeconds) * 1000).toISOString() };
    },
  };
}
