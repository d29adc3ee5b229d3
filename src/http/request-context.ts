/** Request id, per-request logger, access log, and the handlers that turn failures into problems. */
import type { Hook } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { ulid } from 'ulid';
import { GatehouseError } from '../errors.ts';
import type { AppEnv } from './deps.ts';
import { fieldErrors, problemResponse, toGatehouseError, toProblem, validationError } from './problem.ts';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

export const requestIdOf = (incoming: string | undefined): string =>
  incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : ulid();

export function requestContext(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const requestId = requestIdOf(c.req.header('x-request-id'));
    c.set('requestId', requestId);
    c.set('log', logger.child({ requestId }));
    try {
      await next();
    } catch (err) {
      // Hono hands only Error instances to onError; anything else thrown ends up here.
      c.res = handleError(err, c);
    }
    c.header('x-request-id', requestId);
    const status = c.res.status;
    const ms = Math.round((performance.now() - started) * 10) / 10;
    // Path only: query strings can carry tokens. Headers are never logged.
    c.var.log[status >= 500 ? 'error' : 'info']({ method: c.req.method, path: c.req.path, status, ms }, 'request');
  };
}

export function handleError(err: unknown, c: Context<AppEnv>): Response {
  const error = toGatehouseError(err, c);
  if (error.status >= 500) {
    const cause = error.code === 'INTERNAL' && error.cause !== undefined ? error.cause : error;
    c.get('log')?.error({ err: cause, code: error.code }, 'request failed');
  }
  return problemResponse(c, toProblem(error, { requestId: c.get('requestId') ?? '', instance: c.req.path }));
}

export const notFoundHandler = (c: Context<AppEnv>): Response =>
  handleError(new GatehouseError('NOT_FOUND', `No route for ${c.req.method} ${c.req.path}`), c);

/**
 * OpenAPIHono's defaultHook: a failed zod check becomes a VALIDATION problem naming each field.
 * It throws (rather than returning) so the one error handler renders every problem.
 */
export const validationHook: Hook<unknown, AppEnv, string, undefined> = (result) => {
  if (result.success) return;
  const input = (result as { data?: unknown }).data;
  throw validationError(fieldErrors(result.error.issues, result.target === 'json' || result.target === 'form' ? undefined : result.target, input));
};
