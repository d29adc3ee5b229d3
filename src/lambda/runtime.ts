/**
 * What both Lambda functions build once per container, from the environment: the Gatehouse app
 * (composition root), the route map derived from it, and the auth layer over the decision engine.
 */
import { createGatehouse } from '../gatehouse.ts';
import { createAccess } from '../access/index.ts';
import { createAuth, type Auth } from '../auth/index.ts';
import { authConfigFromEnv } from '../auth/config.ts';
import { loadHierarchy } from '../tenancy/hierarchy.ts';
import { routeMapOf, type RouteMap } from './routes.ts';

export interface LambdaRuntime {
  app: { fetch: (req: Request) => Response | Promise<Response>; routes: { path: string; method: string; handler: unknown }[] };
  routeMap: RouteMap;
  auth: Auth;
}

let runtime: Promise<LambdaRuntime> | undefined;

export function lambdaRuntime(env: NodeJS.ProcessEnv = process.env): Promise<LambdaRuntime> {
  runtime ??= (async () => {
    const config = authConfigFromEnv(env);
    const gh = await createGatehouse({ tableName: env.GATEHOUSE_TABLE, cursorSecret: env.GATEHOUSE_CURSOR_SECRET, adminApiKey: config.adminApiKey });
    const app = gh.app();
    const hierarchy = loadHierarchy(env.GATEHOUSE_HIERARCHY);
    // Reuse the composition root's auth layer when it exposes one; otherwise build it over the engine.
    const exposed = (gh as unknown as { auth?: Auth }).auth;
    const auth = exposed ?? (await createAuth({ store: gh.store, hierarchy, engine: createAccess({ store: gh.store, hierarchy }).engine, config }));
    return { app: app as never, routeMap: routeMapOf(app), auth };
  })();
  runtime.catch(() => (runtime = undefined));
  return runtime;
}
