/**
 * The Gatehouse app as an AWS Lambda handler for API Gateway HTTP API (payload format 2.0) events:
 * the very same Hono app `npm start` serves, through Hono's aws-lambda adapter.
 *
 * Deployed handler: `lambda/api.handler` (see `gatehouse deploy template`). The app is built once
 * per container (cold start) from the environment, and reused by every invocation.
 */
import { handle } from 'hono/aws-lambda';
import type { Hono } from 'hono';
import { lambdaRuntime } from './runtime.ts';

export type ApiHandler = ReturnType<typeof handle>;

/** Wraps any built app (tests pass theirs). */
export const createApiHandler = (app: Hono<never>): ApiHandler => handle(app as never);

let cached: Promise<ApiHandler> | undefined;

export const handler: ApiHandler = (async (event: never, context: never) => {
  cached ??= lambdaRuntime().then((rt) => createApiHandler(rt.app as never));
  return (await cached)(event, context);
}) as unknown as ApiHandler;
