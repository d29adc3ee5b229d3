import { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import type { AppDeps, AppEnv } from './deps.ts';
import { registerDocs } from './docs.ts';
import { healthRoutes } from './health.ts';
import { registerOpenApi } from './openapi.ts';
import { handleError, notFoundHandler, requestContext, validationHook } from './request-context.ts';
import { useOneValidatorPerRoute } from './validation.ts';

const DEFAULT_MAX_BODY = 1024 * 1024;

/**
 * The request body limit (413 beyond `maxSize`), judged from the headers when they say it all:
 * with `Content-Length` and no `Transfer-Encoding` the HTTP parser delivers exactly that many
 * bytes, and with neither a GET/HEAD has no body. Only the remaining cases (chunked bodies, or a
 * body without either header) go through Hono's streaming `bodyLimit`, which counts the bytes as
 * they come. Why not Hono's alone: it reads `request.body` on every request, which makes the Node
 * adapter build a full WHATWG Request with a web stream over the socket (and then parse JSON
 * through that stream) — measured at ~7% of a request's CPU.
 */
export function requestBodyLimit(maxSize: number): MiddlewareHandler<AppEnv> {
  const streaming = bodyLimit({ maxSize });
  return async (c, next) => {
    const te = c.req.header('transfer-encoding');
    const cl = c.req.header('content-length');
    if (te === undefined && cl !== undefined && /^\d+$/.test(cl)) {
      if (Number(cl) > maxSize) throw new HTTPException(413, { message: 'Payload Too Large' });
      return next();
    }
    if (te === undefined && cl === undefined && (c.req.method === 'GET' || c.req.method === 'HEAD')) return next();
    return streaming(c, next);
  };
}

/** The HTTP app. Domain routes come in through `deps.routes`; register none after this returns. */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  useOneValidatorPerRoute(app);
  app.use('*', requestContext(deps.logger, deps.authorizer));
  app.use('*', requestBodyLimit(deps.maxBodyBytes ?? DEFAULT_MAX_BODY));
  app.onError(handleError);
  app.notFound(notFoundHandler);
  for (const mw of deps.middleware ?? []) app.use('*', mw);

  healthRoutes(deps)(app);
  for (const register of deps.routes ?? []) register(app);
  registerOpenApi(app, deps.version);
  registerDocs(app);
  return app;
}
