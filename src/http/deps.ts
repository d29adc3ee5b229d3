import type { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';

/**
 * Per-request values on the Hono context (`c.get('requestId')`, `c.var.log`). An interface so the
 * auth layer can add `principal` later, here or by declaration merging.
 */
export interface AppVariables {
  requestId: string;
  /** Child logger bound to this request's id: use it for every log line of the request. */
  log: Logger;
}

export type AppEnv = { Variables: AppVariables };

export type AppHono = OpenAPIHono<AppEnv>;

/** A domain's routes: registers them with `app.openapi(createRoute({...}), handler)`. */
export type RouteModule = (app: AppHono) => void;

export interface AppDeps {
  version: string;
  /** Shown by /health; e.g. `http://localhost:8000` or `aws (eu-west-1)`. */
  dynamoEndpoint: string;
  tableName: string;
  logger: Logger;
  routes?: RouteModule[];
  /** Runs before every route, after request ids (authentication, rate limits). */
  middleware?: MiddlewareHandler<AppEnv>[];
  /** Decides `authorize(permission)` for this app's routes. */
  authorizer?: import('./caller.ts').Authorizer;
  /** Largest accepted request body; defaults to 1 MiB (a DynamoDB item is at most 400 KB). */
  maxBodyBytes?: number;
}
