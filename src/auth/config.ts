/**
 * Authentication and HTTP-convention settings, read from the environment (separately from
 * src/config.ts so the auth layer owns its variables):
 *
 *   GATEHOUSE_JWT_ISSUER          required `iss` of accepted JWTs (enables JWT authentication)
 *   GATEHOUSE_JWT_AUDIENCE        required `aud` (comma-separated for several)
 *   GATEHOUSE_JWT_JWKS_URL        the issuer's JWKS endpoint (keys fetched and cached by jose)
 *   GATEHOUSE_JWT_PUBLIC_KEY      or a static public key: PEM (SPKI) or a JWK as JSON
 *   GATEHOUSE_JWT_ALGORITHMS      allow-list, default RS256,ES256 (asymmetric only; `none`/HS* refused)
 *   GATEHOUSE_JWT_TENANT_CLAIM    claim naming the user's home tenant (informational), default `tenant_id`
 *   GATEHOUSE_DEV_ISSUER=true     local development token issuer (refused in production)
 *   GATEHOUSE_PLATFORM_TENANT     tenant whose gatehouse:platform:admin holders are platform admins
 *   GATEHOUSE_AUTHZ_MAX_STALENESS_MS  opt-in bounded staleness of users' admin-API permissions (default 0)
 *   GATEHOUSE_RATE_LIMIT_BURST    token-bucket size per caller (default 600; 0 disables)
 *   GATEHOUSE_RATE_LIMIT_PER_SECOND  refill rate per caller (default 100)
 */
import { z } from 'zod';

export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const;
export type JwtAlgorithm = (typeof ASYMMETRIC_ALGORITHMS)[number];

export interface JwtIssuerConfig {
  issuer: string;
  audience: string | string[];
  /** The issuer's JWKS endpoint. */
  jwksUrl?: string;
  /** A static public key: PEM (SPKI), a JWK object, or a JWK as JSON text. */
  publicKey?: string | Record<string, unknown> | CryptoKey | import('node:crypto').KeyObject;
  /** Accepted `alg` values; asymmetric only. Default RS256, ES256. */
  algorithms?: JwtAlgorithm[];
  /** Seconds of clock skew tolerated on exp/nbf/iat. Default 30. */
  clockToleranceSeconds?: number;
  /** Longest accepted lifetime (exp - iat), seconds. Default 24 h. */
  maxTokenAgeSeconds?: number;
  /** Claim that names the user's tenant, copied to the actor (informational; authorization never trusts it). */
  tenantClaim?: string;
}

export interface RateLimitConfig {
  /** Bucket size: the burst a caller may send at once. */
  capacity: number;
  /** Tokens added per second. */
  refillPerSecond: number;
  /** Distinct callers remembered per instance (LRU). Default 10,000. */
  maxCallers?: number;
}

export interface AuthConfig {
  /** Trusted JWT issuers (config and/or the development issuer). */
  jwt?: JwtIssuerConfig[];
  /** The bootstrap platform-admin key (GATEHOUSE_ADMIN_API_KEY). */
  adminApiKey?: string;
  /** Enables the local development token issuer (never in production). */
  devIssuer?: boolean;
  production?: boolean;
  /** Per-caller token bucket; false disables rate limiting. */
  rateLimit?: RateLimitConfig | false;
  /** The tenant whose holders of gatehouse:platform:admin are platform admins (GATEHOUSE_PLATFORM_TENANT). */
  platformTenantId?: string;
  /** Opt-in bounded staleness (ms) of users' admin-API permissions; default 0 (strongly consistent). */
  authorizationMaxStalenessMs?: number;
  /** Idempotency records live this long (TTL). Default 24 h. */
  idempotencyTtlSeconds?: number;
}

const bool = z
  .string()
  .optional()
  .transform((v) => v !== undefined && /^(1|true|yes|on)$/i.test(v));

const envSchema = z.object({
  GATEHOUSE_JWT_ISSUER: z.string().min(1).optional(),
  GATEHOUSE_JWT_AUDIENCE: z.string().min(1).optional(),
  GATEHOUSE_JWT_JWKS_URL: z.string().url().optional(),
  GATEHOUSE_JWT_PUBLIC_KEY: z.string().min(1).optional(),
  GATEHOUSE_JWT_ALGORITHMS: z.string().optional(),
  GATEHOUSE_JWT_TENANT_CLAIM: z.string().optional(),
  GATEHOUSE_DEV_ISSUER: bool,
  GATEHOUSE_PLATFORM_TENANT: z.string().min(1).max(128).optional(),
  GATEHOUSE_AUTHZ_MAX_STALENESS_MS: z.coerce.number().int().min(0).max(60_000).default(0),
  GATEHOUSE_ADMIN_API_KEY: z.string().min(16).optional(),
  GATEHOUSE_RATE_LIMIT_BURST: z.coerce.number().int().min(0).default(600),
  GATEHOUSE_RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(100),
  NODE_ENV: z.string().default('development'),
});

/** Reads the auth settings; throws a message naming each bad variable. */
export function authConfigFromEnv(env: NodeJS.ProcessEnv = process.env): AuthConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new Error(`Invalid auth configuration:\n${parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n')}`);
  }
  const e = parsed.data;
  const production = e.NODE_ENV === 'production';
  const jwt: JwtIssuerConfig[] = [];
  if (e.GATEHOUSE_JWT_ISSUER) {
    if (!e.GATEHOUSE_JWT_AUDIENCE) throw new Error('GATEHOUSE_JWT_AUDIENCE is required with GATEHOUSE_JWT_ISSUER');
    if (!e.GATEHOUSE_JWT_JWKS_URL === !e.GATEHOUSE_JWT_PUBLIC_KEY) throw new Error('Set exactly one of GATEHOUSE_JWT_JWKS_URL and GATEHOUSE_JWT_PUBLIC_KEY');
    jwt.push({
      issuer: e.GATEHOUSE_JWT_ISSUER,
      audience: e.GATEHOUSE_JWT_AUDIENCE.split(',').map((s) => s.trim()).filter(Boolean),
      jwksUrl: e.GATEHOUSE_JWT_JWKS_URL,
      publicKey: e.GATEHOUSE_JWT_PUBLIC_KEY,
      algorithms: e.GATEHOUSE_JWT_ALGORITHMS ? (e.GATEHOUSE_JWT_ALGORITHMS.split(',').map((s) => s.trim()) as JwtAlgorithm[]) : undefined,
      tenantClaim: e.GATEHOUSE_JWT_TENANT_CLAIM,
    });
  }
  if (e.GATEHOUSE_DEV_ISSUER && production) throw new Error('GATEHOUSE_DEV_ISSUER cannot be enabled when NODE_ENV=production');
  return {
    jwt,
    adminApiKey: e.GATEHOUSE_ADMIN_API_KEY,
    devIssuer: e.GATEHOUSE_DEV_ISSUER,
    production,
    platformTenantId: e.GATEHOUSE_PLATFORM_TENANT,
    authorizationMaxStalenessMs: e.GATEHOUSE_AUTHZ_MAX_STALENESS_MS,
    rateLimit: e.GATEHOUSE_RATE_LIMIT_BURST === 0 ? false : { capacity: e.GATEHOUSE_RATE_LIMIT_BURST, refillPerSecond: e.GATEHOUSE_RATE_LIMIT_PER_SECOND },
  };
}
