/**
 * Optimistic concurrency over HTTP (RFC 9110): reads return `ETag: "<version>"`; updates and
 * deletes send `If-Match: "<version>"`.
 *  - `etag(c, version)` sets the header (and returns the version for chaining).
 *  - `ifMatch(c)` reads If-Match: a version number, or undefined when absent (or `*`).
 *  - `requireIfMatch(c)` is the same but 428 PRECONDITION_REQUIRED when absent.
 *  - `preconditions()` (global middleware): when a request carried If-Match and the handler ended
 *    in the store's VERSION_CONFLICT (the expectedVersion condition failed), the answer is 412
 *    PRECONDITION_FAILED instead of 409 — the client's precondition is what failed.
 * An If-Match that is not one of our ETags can never match: 412 (RFC 9110 §13.1.1).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { z } from '@hono/zod-openapi';
import { GatehouseError } from '../errors.ts';
import type { AppEnv } from './deps.ts';
import { handleError } from './request-context.ts';

const ETAG = /^\s*(?:W\/)?"(\d{1,15})"\s*$/;
const BARE = /^\s*(\d{1,15})\s*$/;

/** `"3"` for version 3. */
export const etagOf = (version: number) => `"${version}"`;

/** Sets `ETag: "<version>"` on the response. */
export function etag(c: Context, version: number): number {
  c.header('etag', etagOf(version));
  return version;
}

/** Sets the ETag from a resource's `version` and returns the resource: `c.json(withEtag(c, user))`. */
export function withEtag<T extends { version: number }>(c: Context, resource: T): T {
  etag(c, resource.version);
  return resource;
}

/** The version an If-Match names; undefined when absent or `*` (any version). */
export function ifMatch(c: Context): number | undefined {
  const h = c.req.header('if-match');
  if (h === undefined || h.trim() === '*') return undefined;
  // A list ("1", "2") names several acceptable versions; ours are exact, so only one may be given.
  const m = ETAG.exec(h) ?? BARE.exec(h);
  if (!m) throw new GatehouseError('PRECONDITION_FAILED', 'If-Match does not name a current version; send the ETag you read, e.g. "3"', { ifMatch: h.slice(0, 64) });
  return Number(m[1]);
}

/** If-Match is required (updates): 428 when it is missing. */
export function requireIfMatch(c: Context): number {
  const v = ifMatch(c);
  if (v === undefined) {
    if (c.req.header('if-match')?.trim() === '*') {
      throw new GatehouseError('PRECONDITION_REQUIRED', 'If-Match: * is not enough here: send the ETag (version) you read, e.g. "3"');
    }
    throw new GatehouseError('PRECONDITION_REQUIRED', 'Send If-Match with the ETag (version) you read, e.g. If-Match: "3"');
  }
  return v;
}

/** OpenAPI header parameter for routes that read If-Match: `request: { headers: IfMatchHeader }`. */
export const IfMatchHeader = z.object({
  'if-match': z.string().optional().openapi({ param: { name: 'if-match', in: 'header' }, description: 'If-Match: the ETag (version) the change is based on, e.g. "3"', example: '"3"' }),
});

/** Maps a VERSION_CONFLICT under If-Match to 412 (see the file comment). */
export function preconditions(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // Only a request that carried If-Match can be remapped: the others pass straight through.
    if (c.req.header('if-match') === undefined) return next();
    await next();
    const err = c.error;
    if (err instanceof GatehouseError && err.code === 'VERSION_CONFLICT') {
      const mapped = new GatehouseError('PRECONDITION_FAILED', err.message, { ...err.details }, { cause: err });
      c.error = mapped;
      // Hono's setter keeps the headers already set (request id, rate limit) on the new response.
      c.res = handleError(mapped, c);
    }
  };
}
