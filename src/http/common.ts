/** Schemas and helpers shared by every domain's routes. Import `z` from '@hono/zod-openapi'. */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { statusOf, type ErrorCode } from '../errors.ts';
import { PROBLEM_CONTENT_TYPE } from './problem.ts';

export const SECURITY_SCHEME = 'bearerAuth';
/** Put on every /v1 route: `security: bearer`. */
export const bearer = [{ [SECURITY_SCHEME]: [] as string[] }];

export const FieldErrorSchema = z
  .object({ field: z.string().openapi({ example: 'email' }), message: z.string().openapi({ example: 'Required' }) })
  .openapi('FieldError');

export const ProblemSchema = z
  .looseObject({
    type: z.string().openapi({ example: 'urn:gatehouse:problem:validation' }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string().openapi({ description: 'The request path' }),
    code: z.enum(Object.keys(statusOf) as [ErrorCode, ...ErrorCode[]]),
    requestId: z.string().openapi({ description: 'Also in the x-request-id response header' }),
    errors: z.array(FieldErrorSchema).optional(),
  })
  .openapi('Problem', { description: 'RFC 9457 problem details; extra members may carry facts a client can act on.' });

/** `{ items, cursor }`; `cursor` is null on the last page. Name it to make it an OpenAPI component. */
export function listOf<T extends z.ZodType>(item: T, name?: string) {
  const schema = z.object({
    items: z.array(item),
    cursor: z.string().nullable().openapi({ description: 'Pass as ?cursor= to get the next page; null at the end' }),
  });
  return name ? schema.openapi(name) : schema;
}

/** `?limit=&cursor=`; extend it for filters: `PaginationQuery.extend({ email: z.string().optional() })`. */
export const PaginationQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25).openapi({ param: { name: 'limit', in: 'query' }, example: 25 }),
  cursor: z.string().min(1).max(4096).optional().openapi({ param: { name: 'cursor', in: 'query' }, description: 'Opaque cursor from the previous page' }),
});

const problem = <D extends string>(description: D) =>
  ({ description, content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema } } }) as const;

/** Error responses to spread into `createRoute({ responses })`. */
export const standardErrors = {
  400: problem('Invalid request (VALIDATION, INVALID_CURSOR)'),
  401: problem('Missing or invalid credentials (UNAUTHENTICATED)'),
  403: problem('Not allowed (FORBIDDEN)'),
  404: problem('Not found (NOT_FOUND)'),
  409: problem('Conflict with the current state (CONFLICT, VERSION_CONFLICT)'),
  412: problem('If-Match did not match the current version (PRECONDITION_FAILED)'),
  415: problem('The body is not application/json (UNSUPPORTED_MEDIA_TYPE)'),
  422: problem('Idempotency-Key reused with a different request (UNPROCESSABLE)'),
  428: problem('If-Match is required (PRECONDITION_REQUIRED)'),
  429: problem('Too many requests (RATE_LIMITED)'),
  500: problem('Unexpected failure (INTERNAL)'),
} as const;

/** A subset of `standardErrors`: `responses: { 201: ..., ...errorResponses(400, 401, 409) }`. */
export function errorResponses<S extends keyof typeof standardErrors>(...statuses: S[]): Pick<typeof standardErrors, S> {
  return Object.fromEntries(statuses.map((s) => [s, standardErrors[s]])) as Pick<typeof standardErrors, S>;
}

/**
 * A required JSON body. Use it rather than a bare `content` object: an optional body lets a
 * request without a content-type reach the handler unvalidated, as `{}`.
 */
export function jsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return { required: true as const, description, content: { 'application/json': { schema } } };
}

/** A JSON response entry for `responses`. */
export function jsonResponse<T extends z.ZodType, D extends string>(schema: T, description: D) {
  return { description, content: { 'application/json': { schema } } };
}

/** 201 with the created resource, and its URL in `Location` when given. */
export function json201<C extends Context, T>(c: C, body: T, location?: string) {
  if (location) c.header('location', location);
  return c.json(body, 201);
}
