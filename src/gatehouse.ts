/**
 * The composition root: `createGatehouse()` builds the store, every domain's services and the
 * HTTP app on one table. Used by the server, the CLI, the Lambda handlers, tests and the bench,
 * and importable by applications that embed Gatehouse as a library.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Logger } from 'pino';
import { accessRoutes, createAccess, type Access } from './access/index.ts';
import { authConfigFromEnv, createAuth, type Auth, type AuthConfig } from './auth/index.ts';
import { systemContext } from './context.ts';
import { createEntitlements, type Entitlements, type EntitlementsDeps } from './entitlements/index.ts';
import { createApp } from './http/app.ts';
import type { RouteModule } from './http/deps.ts';
import { createLogger } from './http/logger.ts';
import { createIdentity, identityRoutes, type IdentityOptions, type IdentityServices } from './identity/index.ts';
import { createDynamoClients } from './store/client.ts';
import { Store } from './store/store.ts';
import { createTenancy, loadHierarchy, tenancyRoutes, type TenancyServices } from './tenancy/index.ts';
import type { Hierarchy } from './tenancy/model.ts';
import pkg from '../package.json' with { type: 'json' };

export const VERSION: string = pkg.version;

export interface GatehouseOptions {
  /** DynamoDB endpoint; defaults to AWS_ENDPOINT_URL_DYNAMODB, then AWS. */
  endpoint?: string;
  /** Reuse existing clients (tests, embedding). */
  clients?: { raw: DynamoDBClient; doc: DynamoDBDocumentClient };
  tableName?: string;
  /** A built-in hierarchy name, a JSON file path, or a parsed hierarchy (default GATEHOUSE_HIERARCHY or facilities). */
  hierarchy?: string | Hierarchy;
  cursorSecret?: string;
  /** The bootstrap platform-admin API key (GATEHOUSE_ADMIN_API_KEY). */
  adminApiKey?: string;
  /** Authentication settings; defaults from the environment (GATEHOUSE_JWT_*, …). */
  auth?: AuthConfig;
  identity?: Pick<IdentityOptions, 'dataKey' | 'scrypt' | 'warn'>;
  entitlements?: Pick<EntitlementsDeps, 'mailer' | 'recipients' | 'sender'>;
  cache?: { maxEntries?: number; settleMs?: number; stampReadsInFlight?: number };
  /** Create the permission catalog and built-in roles if missing (default true; false sends no request). */
  bootstrap?: boolean;
  logger?: Logger;
  now?: () => Date;
}

export interface Gatehouse {
  store: Store;
  hierarchy: Hierarchy;
  tableName: string;
  endpoint: string;
  logger: Logger;
  tenancy: TenancyServices;
  identity: IdentityServices;
  access: Access;
  entitlements: Entitlements;
  auth: Auth;
  /** Every domain's HTTP routes. */
  routes: RouteModule[];
  /** Builds the HTTP app (Hono): `app.fetch` serves Node, Lambda and tests alike. */
  app(): ReturnType<typeof createApp>;
  close(): void;
}

export async function createGatehouse(opts: GatehouseOptions = {}): Promise<Gatehouse> {
  const clients = opts.clients ?? createDynamoClients({ endpoint: opts.endpoint });
  const endpoint = opts.endpoint ?? process.env.AWS_ENDPOINT_URL_DYNAMODB ?? `aws (${process.env.AWS_REGION ?? 'default region'})`;
  const tableName = opts.tableName ?? process.env.GATEHOUSE_TABLE ?? 'app_data';
  const logger = opts.logger ?? createLogger((process.env.LOG_LEVEL as never) ?? 'info');
  const hierarchy = typeof opts.hierarchy === 'object' ? opts.hierarchy : loadHierarchy(opts.hierarchy);
  const store = new Store({ doc: clients.doc, tableName, cursorSecret: opts.cursorSecret, now: opts.now });

  const tenancy = createTenancy({ store, hierarchy });
  const identity = createIdentity({ store, hierarchy, warn: (m) => logger.warn(m), ...opts.identity });
  const access = createAccess({ store, hierarchy, cache: opts.cache, now: opts.now });
  const entitlements = createEntitlements({ store, hierarchy, now: opts.now, ...opts.entitlements });
  // The permission catalog and the built-in roles the admin API is authorized with (idempotent).
  if (opts.bootstrap !== false) await access.bootstrap(systemContext());
  const authConfig: AuthConfig = { ...authConfigFromEnv(), ...opts.auth, ...(opts.adminApiKey ? { adminApiKey: opts.adminApiKey } : {}) };
  const auth = await createAuth({ store, hierarchy, engine: access.engine, config: authConfig, now: opts.now });

  const routes: RouteModule[] = [
    auth.routes,
    tenancyRoutes(tenancy),
    identityRoutes({ identity, tenancy }),
    accessRoutes(access),
    ...entitlements.routes,
  ];

  return {
    store,
    hierarchy,
    tableName,
    endpoint,
    logger,
    tenancy,
    identity,
    access,
    entitlements,
    auth,
    routes,
    app: () =>
      createApp({ version: VERSION, dynamoEndpoint: endpoint, tableName, logger, routes, middleware: auth.middleware, authorizer: auth.authorizer }),
    close: () => {
      if (!opts.clients) clients.raw.destroy();
    },
  };
}
