import { OpenAPIHono } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import type { AppDeps, AppEnv } from './deps.ts';
import { registerDocs } from './docs.ts';
import { healthRoutes } from './health.ts';
import { registerOpenApi } from './openapi.ts';
import { handleError, notFoundHandler, requestContext, validationHook } from './request-context.ts';

const DEFAULT_MAX_BODY = 1024 * 1024;

/** The HTTP app. Domain routes come in through `deps.routes`; register none after this returns. */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use('*', requestContext(deps.logger));
  app.use('*', bodyLimit({ maxSize: deps.maxBodyBytes ?? DEFAULT_MAX_BODY }));
  app.onError(handleError);
  app.notFound(notFoundHandler);
  if (deps.authorizer) {
    const authorizer = deps.authorizer;
    app.use('*', async (c, next) => {
      c.set('authorizer', authorizer);
      await next();
    });
  }
  for (const mw of deps.middleware ?? []) app.use('*', mw);

  healthRoutes(deps)(app);
  for (const register of deps.routes ?? []) register(app);
  registerOpenApi(app, deps.version);
  registerDocs(app);
  return app;
}
