/** Request id, per-request logger, access log, and the handlers that turn failures into problems. */
import { randomFillSync } from 'node:crypto';
import { ServerResponse } from 'node:http';
import type { Hook } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { ulid } from 'ulid';
import { GatehouseError } from '../errors.ts';
import type { Authorizer } from './caller.ts';
import type { AppEnv } from './deps.ts';
import { fieldErrors, problemResponse, toGatehouseError, toProblem, validationError } from './problem.ts';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Random bytes for request ids, drawn from a pool refilled 4 KiB at a time. `ulid()` without a PRNG
 * makes one `getRandomValues` call per character (16 per id) and looks the PRNG up again on every
 * call: measured at ~6% of a whole request's CPU. Request ids need uniqueness, not secrecy, but the
 * pool is filled from the CSPRNG anyway. A byte / 256 maps uniformly onto ULID's 32 characters.
 */
const pool = new Uint8Array(4096);
let poolAt = pool.length;
const pooledPrng = (): number => {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  return pool[poolAt++] / 256;
};

export const requestIdOf = (incoming: string | undefined): string =>
  incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : ulid(undefined, pooledPrng);

/**
 * The request's logger, created on first use: `logger.child()` serializes (and redacts) its
 * bindings at once, which costs ~2% of a request that never logs anything but its access line.
 * One shared Proxy handler: no closure is allocated per request.
 */
interface LazyTarget {
  root: Logger;
  requestId: string;
  child?: Logger;
}
const childOf = (t: LazyTarget): Logger => (t.child ??= t.root.child({ requestId: t.requestId }));
const lazyHandler: ProxyHandler<LazyTarget> = {
  get(t, prop) {
    const child = childOf(t);
    const v = Reflect.get(child, prop, child) as unknown;
    return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(child) : v;
  },
  set(t, prop, value) {
    return Reflect.set(childOf(t), prop, value);
  },
};
const lazyChild = (root: Logger, requestId: string): Logger => new Proxy<LazyTarget>({ root, requestId }, lazyHandler) as unknown as Logger;

/** The Node ServerResponse when served by @hono/node-server (its bindings are `{ incoming, outgoing }`). */
function nodeResponseOf(c: Context): ServerResponse | undefined {
  const outgoing = (c.env as { outgoing?: unknown } | undefined)?.outgoing;
  return outgoing instanceof ServerResponse && !outgoing.headersSent ? outgoing : undefined;
}

/** Request id, lazy logger and (when given) the app's authorizer for `authorize()`; then the access log line. */
export function requestContext(logger: Logger, authorizer?: Authorizer): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const requestId = requestIdOf(c.req.header('x-request-id'));
    c.set('requestId', requestId);
    c.set('log', lazyChild(logger, requestId));
    if (authorizer) c.set('authorizer', authorizer);
    // Served by Node: the header goes straight onto the ServerResponse, where Node merges it into
    // whatever response is written. Through Hono (Lambda, app.request) it is set before the
    // response exists, so Hono puts it on the response it builds. Why not always Hono: its first
    // header turns every response's headers into a WHATWG Headers object that the Node adapter
    // converts back (measured ~3-6 µs a request; a bare route has none), and setting it after
    // next() makes Hono rebuild the response from its body stream.
    const outgoing = nodeResponseOf(c);
    if (outgoing) outgoing.setHeader('x-request-id', requestId);
    else c.header('x-request-id', requestId);
    try {
      await next();
    } catch (err) {
      // Hono hands only Error instances to onError; anything else thrown ends up here.
      c.res = handleError(err, c);
    }
    // A handler that returned a Response of its own (not built through the context) lacks it.
    if (!outgoing && c.res.headers.get('x-request-id') !== requestId) c.header('x-request-id', requestId);
    const status = c.res.status;
    if (!logger.isLevelEnabled(status >= 500 ? 'error' : 'info')) return;
    const ms = Math.round((performance.now() - started) * 10) / 10;
    // Path only: query strings can carry tokens. Headers are never logged. The root logger with
    // the request id as a field writes the same line as the request's child logger would.
    logger[status >= 500 ? 'error' : 'info']({ requestId, method: c.req.method, path: c.req.path, status, ms }, 'request');
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
