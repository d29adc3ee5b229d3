/**
 * The composition root: `createGatehouse()` builds the store, the domain services and the HTTP
 * app on one table. Used by the server, the CLI, the Lambda handlers, tests and the bench, and
 * importable by applications that embed Gatehouse as a library.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Logger } from 'pino';
import { authenticate, bootstrapKeyAuthenticator, type Authenticator } from './http/auth.ts';
import { createApp } from './http/app.ts';
import type { RouteModule } from './http/deps.ts';
import { createLogger } from './http/logger.ts';
import { createDynamoClients } from './store/client.ts';
import { Store } from './store/store.ts';
import pkg from '../package.json' with { type: 'json' };

export const VERSION: string = pkg.version;

export interface GatehouseOptions {
  /** DynamoDB endpoint; defaults to AWS_ENDPOINT_URL_DYNAMODB, then AWS. */
  endpoint?: string;
  /** Reuse existing clients (tests, embedding). */
  clients?: { raw: DynamoDBClient; doc: DynamoDBDocumentClient };
  tableName?: string;
  cursorSecret?: string;
  /** The bootstrap platform-admin API key (GATEHOUSE_ADMIN_API_KEY). */
  adminApiKey?: string;
  logger?: Logger;
  now?: () => Date;
}

export interface Gatehouse {
  store: Store;
  tableName: string;
  endpoint: string;
  logger: Logger;
  /** Every domain's HTTP routes. */
  routes: RouteModule[];
  authenticators: Authenticator[];
  /** Builds the HTTP app (Hono): `app.fetch` serves Node, Lambda and tests alike. */
  app(): ReturnType<typeof createApp>;
  close(): void;
}

export async function createGatehouse(opts: GatehouseOptions = {}): Promise<Gatehouse> {
  const clients = opts.clients ?? createDynamoClients({ endpoint: opts.endpoint });
  const endpoint = opts.endpoint ?? process.env.AWS_ENDPOINT_URL_DYNAMODB ?? `aws:${process.env.AWS_REGION ?? 'default'}`;
  const tableName = opts.tableName ?? process.env.GATEHOUSE_TABLE ?? 'app_data';
  const logger = opts.logger ?? createLogger((process.env.LOG_LEVEL as never) ?? 'info');
  const store = new Store({ doc: clients.doc, tableName, cursorSecret: opts.cursorSecret, now: opts.now });

  const authenticators: Authenticator[] = [];
  if (opts.adminApiKey) authenticators.push(bootstrapKeyAuthenticator(opts.adminApiKey));
  const routes: RouteModule[] = [];

  const gh: Gatehouse = {
    store,
    tableName,
    endpoint,
    logger,
    routes,
    authenticators,
    app: () => createApp({ version: VERSION, dynamoEndpoint: endpoint, tableName, logger, routes, middleware: [authenticate(authenticators)] }),
    close: () => {
      if (!opts.clients) clients.raw.destroy();
    },
  };
  return gh;
}
