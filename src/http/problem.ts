/** RFC 9457 problem documents: the only shape an error leaves the service in. */
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ZodError, type z } from 'zod';
import { GatehouseError, statusOf, type ErrorCode, type FieldError } from '../errors.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: ErrorCode;
  requestId: string;
  errors?: FieldError[];
  [extra: string]: unknown;
}

const titles: Record<ErrorCode, string> = {
  VALIDATION: 'Invalid request',
  INVALID_CURSOR: 'Invalid cursor',
  ITEM_TOO_LARGE: 'Payload too large',
  TRANSACTION_TOO_LARGE: 'Request too large',
  UNAUTHENTICATED: 'Unauthenticated',
  FORBIDDEN: 'Forbidden',
  NOT_FOUND: 'Not found',
  CONFLICT: 'Conflict',
  VERSION_CONFLICT: 'Version conflict',
  PRECONDITION_FAILED: 'Precondition failed',
  PRECONDITION_REQUIRED: 'Precondition required',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported media type',
  UNPROCESSABLE: 'Unprocessable request',
  RATE_LIMITED: 'Too many requests',
  CONFIG: 'Internal server error',
  INTERNAL: 'Internal server error',
  RETRYABLE: 'Service unavailable',
  BATCH_INCOMPLETE: 'Service unavailable',
};

export const problemType = (code: ErrorCode) => `urn:gatehouse:problem:${code.toLowerCase().replaceAll('_', '-')}`;

const GENERIC_500 = 'An unexpected error occurred. Quote the requestId when reporting it.';
const GENERIC_503 = 'The service is temporarily unavailable; retry shortly.';

/** Where a validated value came from, as the prefix of its field names (the body has none). */
const targetPrefix: Record<string, string> = { query: 'query', param: 'path', header: 'header', cookie: 'cookie' };

/**
 * Zod issues as `{field, message}` with dotted paths (`attributes.floors`, `permissions.0.key`).
 * `input` is the value that was validated; it lets a missing field read "Required".
 */
export function fieldErrors(issues: readonly z.core.$ZodIssue[], target?: string, input?: unknown): FieldError[] {
  const prefix = target ? targetPrefix[target] : undefined;
  const name = (path: readonly PropertyKey[]) => {
    const dotted = path.map(String).join('.');
    if (prefix) return dotted ? `${prefix}.${dotted}` : prefix;
    return dotted || 'body';
  };
  return issues.flatMap((issue): FieldError[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: name([...issue.path, key]), message: 'Unknown field' }));
    }
    const missing = issue.code === 'invalid_type' && issue.path.length > 0 && valueAt(input, issue.path) === undefined;
    return [{ field: name(issue.path), message: missing ? 'Required' : issue.message }];
  });
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

export function validationError(errors: FieldError[]): GatehouseError {
  const [first] = errors;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  const detail = first ? `${first.field}: ${first.message}${more}` : 'The request is invalid';
  return new GatehouseError('VALIDATION', detail, { errors });
}

/** Normalises anything thrown into a GatehouseError whose message is safe to show a client. */
export function toGatehouseError(err: unknown, c?: Context): GatehouseError {
  if (err instanceof GatehouseError) return err;
  if (err instanceof ZodError) return validationError(fieldErrors(err.issues));
  if (err instanceof HTTPException) return fromHttpException(err, c);
  return new GatehouseError('INTERNAL', GENERIC_500, {}, { cause: err });
}

// Hono and its middleware throw HTTPException: map by status, never by message.
function fromHttpException(err: HTTPException, c?: Context): GatehouseError {
  switch (err.status) {
    case 400: {
      const json = /json/i.test(c?.req.header('content-type') ?? '');
      const message = json ? 'The request body is not valid JSON' : 'The request body could not be parsed';
      return new GatehouseError('VALIDATION', message, { errors: [{ field: 'body', message }] });
    }
    case 413:
      return new GatehouseError('ITEM_TOO_LARGE', 'The request body is too large');
    case 415:
      return new GatehouseError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json');
    default: {
      const code = (Object.keys(statusOf) as ErrorCode[]).find((k) => statusOf[k] === err.status);
      if (code && err.status < 500) return new GatehouseError(code, err.message || titles[code]);
      return new GatehouseError('INTERNAL', GENERIC_500, {}, { cause: err });
    }
  }
}

export function toProblem(err: GatehouseError, ctx: { requestId: string; instance: string }): Problem {
  const status = err.status;
  // Server-side failures say nothing about their cause: messages may name internals.
  const detail = status < 500 ? err.message : status === 503 ? GENERIC_503 : GENERIC_500;
  const base = { type: problemType(err.code), title: titles[err.code], status, detail, instance: ctx.instance, code: err.code, requestId: ctx.requestId };
  if (status >= 500) return base;
  const { errors, ...extra } = err.details;
  // base twice: standard members first in order, and never overridden by an extra detail.
  return { ...base, ...extra, ...base, ...(errors?.length ? { errors } : {}) };
}

export function problemResponse(c: Context, problem: Problem): Response {
  const headers: Record<string, string> = { 'content-type': PROBLEM_CONTENT_TYPE };
  if (problem.status === 401) headers['www-authenticate'] = 'Bearer';
  if (problem.status === 503) headers['retry-after'] = '1';
  const retryAfter = problem.retryAfterSeconds;
  if (problem.status === 429 && typeof retryAfter === 'number') headers['retry-after'] = String(Math.ceil(retryAfter));
  return c.json(problem, problem.status as ContentfulStatusCode, headers);
}
