/**
 * Per-caller rate limiting: a token bucket per authenticated caller (API key, user, bootstrap key),
 * kept IN MEMORY, PER INSTANCE.
 *
 * Why per instance: a shared counter would be a DynamoDB item written on every request of a
 * caller — one partition key taking a busy caller's whole traffic (design principle 9: no hot key),
 * plus a write per read. N instances therefore allow up to N × the configured rate; size the
 * bucket per instance, and put a global ceiling in front (API Gateway throttling / WAF) if needed.
 *
 * Headers (IETF draft-ietf-httpapi-ratelimit-headers, structured fields):
 *   RateLimit-Policy: "default";q=<bucket size>;w=<seconds to refill an empty bucket>
 *   RateLimit:        "default";r=<tokens left>;t=<seconds until the bucket is full again>
 * and on 429: Retry-After (seconds until one token is back) with a RATE_LIMITED problem.
 * Unauthenticated requests are not counted here (they fail authentication first).
 */
import type { MiddlewareHandler } from 'hono';
import { LRUCache } from 'lru-cache';
import type { RateLimitConfig } from '../auth/config.ts';
import { GatehouseError } from '../errors.ts';
import type { AppEnv } from './deps.ts';

export interface Take {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until a token is available (0 when allowed). */
  retryAfterSeconds: number;
  /** Seconds until the bucket is full. */
  resetSeconds: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class TokenBuckets {
  private readonly buckets: LRUCache<string, Bucket>;
  constructor(
    readonly config: RateLimitConfig,
    private readonly clock: () => number = () => performance.now(),
  ) {
    if (!(config.capacity >= 1) || !(config.refillPerSecond > 0)) throw new Error('Rate limit: capacity ≥ 1 and refillPerSecond > 0');
    this.buckets = new LRUCache({ max: config.maxCallers ?? 10_000 });
  }

  /** Takes one token for `key`. */
  take(key: string): Take {
    const { capacity, refillPerSecond } = this.config;
    const now = this.clock();
    const b = this.buckets.get(key) ?? { tokens: capacity, at: now };
    b.tokens = Math.min(capacity, b.tokens + ((now - b.at) / 1000) * refillPerSecond);
    b.at = now;
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    this.buckets.set(key, b);
    return {
      allowed,
      remaining: Math.floor(b.tokens),
      retryAfterSeconds: allowed ? 0 : (1 - b.tokens) / refillPerSecond,
      resetSeconds: (capacity - b.tokens) / refillPerSecond,
    };
  }

  get policy(): string {
    return `"default";q=${this.config.capacity};w=${Math.max(1, Math.ceil(this.config.capacity / this.config.refillPerSecond))}`;
  }
}

export function rateLimit(limiter: TokenBuckets | RateLimitConfig): MiddlewareHandler<AppEnv> {
  const buckets = limiter instanceof TokenBuckets ? limiter : new TokenBuckets(limiter);
  const policy = buckets.policy;
  return async (c, next) => {
    const p = c.get('principal');
    if (!p) return next();
    const t = buckets.take(`${p.actor.type}:${p.actor.id}`);
    c.header('ratelimit-policy', policy);
    c.header('ratelimit', `"default";r=${t.remaining};t=${Math.ceil(t.resetSeconds)}`);
    if (!t.allowed) {
      const retryAfterSeconds = Math.max(1, Math.ceil(t.retryAfterSeconds));
      throw new GatehouseError('RATE_LIMITED', `Too many requests from this caller; retry in ${retryAfterSeconds} s`, { retryAfterSeconds });
    }
    await next();
  };
}
