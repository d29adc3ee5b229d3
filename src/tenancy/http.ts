/**
 * HTTP helpers shared by the tenancy and identity routes: ETag / If-Match (RFC 9110) over the item
 * `version`, and the common path/query parameter schemas.
 */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { GatehouseError, isGatehouseError } from '../errors.ts';
import { etag, ifMatch as optionalIfMatch, requireIfMatch } from '../http/conventions.ts';
import { PathId } from './schema.ts';

/** `ETag: "<version>"` on every single-resource response. */
export function setEtag(c: Context, version: number) {
  etag(c, version);
}

/**
 * The version an If-Match header names (the project's conventions): required → 428 when missing;
 * optional → undefined when missing or `*`.
 */
export function ifMatch(c: Context, required = true): number | undefined {
  return required ? requireIfMatch(c) : optionalIfMatch(c);
}

/** A stale If-Match is 412 PRECONDITION_FAILED (the service reports VERSION_CONFLICT). */
export async function precondition<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (isGatehouseError(e, 'VERSION_CONFLICT')) throw new GatehouseError('PRECONDITION_FAILED', `${e.message.replace(/; re-read it and retry$/, '')}: If-Match does not match the current version`, e.details);
    throw e;
  }
}

const pathParam = (name: string) => PathId.openapi({ param: { name, in: 'path' } });
export const TenantParams = z.object({ tenantId: pathParam('tenantId') });
export const ScopeParams = TenantParams.extend({ scopeId: pathParam('scopeId') });
export const UserParams = TenantParams.extend({ userId: pathParam('userId') });
export const ScopeUserParams = ScopeParams.extend({ userId: pathParam('userId') });
export const KindQuery = z.object({
  kind: z.string().min(1).max(32).optional().openapi({ param: { name: 'kind', in: 'query' }, description: "The scope's kind, when known: a GetItem instead of a BatchGetItem over every kind" }),
});
// The parameter name must equal the key (zod-openapi refuses `if-match` vs `If-Match`); headers
// are case-insensitive anyway.
export const IfMatchHeader = z.object({
  'if-match': z.string().optional().openapi({ param: { name: 'if-match', in: 'header' }, description: 'The ETag (version) the change is based on (required)', example: '"3"' }),
});
export const OptionalIfMatchHeader = z.object({
  'if-match': z.string().optional().openapi({ param: { name: 'if-match', in: 'header' }, description: 'Optional ETag of the version being changed' }),
});
export { pathParam };
