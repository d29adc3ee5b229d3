/** Route helpers shared by the entitlement, audit, notification and session routes. */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { PaginationQuery, ProblemSchema } from '../http/common.ts';
import { PROBLEM_CONTENT_TYPE } from '../http/problem.ts';
import { etagOf, parseIfMatch } from './common.ts';

export const PathTenant = z.object({ tenantId: z.string().min(1).max(128).openapi({ param: { name: 'tenantId', in: 'path' } }) });
export const pathParam = (name: string, description?: string) =>
  z.string().min(1).max(256).openapi({ param: { name, in: 'path' }, ...(description ? { description } : {}) });

export const ScopeRefSchema = z
  .object({ kind: z.string().min(1).max(64).openapi({ example: 'building' }), id: z.string().min(1).max(128) })
  .openapi('ScopeRef', { description: 'A scope; the tenant itself is `{ kind: <tenant kind>, id: <tenantId> }`' });

export const Timestamp = z.string().openapi({ example: '2025-01-31T12:00:00.000Z' });

export const RangeQuery = PaginationQuery.extend({
  from: z.string().max(40).optional().openapi({ param: { name: 'from', in: 'query' }, description: 'ISO date or date-time (inclusive)', example: '2025-01-01' }),
  to: z.string().max(40).optional().openapi({ param: { name: 'to', in: 'query' }, description: 'ISO date or date-time (inclusive; a date covers its whole day)', example: '2025-01-31' }),
});

export const IfMatchHeader = z.object({
  'if-match': z.string().optional().openapi({ param: { name: 'if-match', in: 'header' }, description: 'The ETag (version) the change is based on; 412 if it moved' }),
});

export const ifMatchOf = (c: Context) => parseIfMatch(c.req.header('if-match'));

export function withEtag<T extends { version: number }>(c: Context, body: T): T {
  c.header('etag', etagOf(body.version));
  return body;
}

export const noContent = { 204: { description: 'Done' } } as const;

/** 422 is not among the standard error responses. */
export const unprocessable = {
  422: { description: 'Well-formed but not applicable now (UNPROCESSABLE), e.g. a seat on an expired license', content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema } } },
} as const;
