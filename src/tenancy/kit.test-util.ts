/**
 * Test fixture for the tenancy and identity suites (imported by tests only): a fresh table on the
 * run's DynamoDB Local, the services for one hierarchy, and the HTTP app with the real
 * authentication middleware (a bootstrap admin key, plus a non-admin token to prove every route
 * is authorized).
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { systemContext, type RequestContext } from '../context.ts';
import { createApp } from '../http/app.ts';
import { authenticate, bootstrapKeyAuthenticator } from '../http/auth.ts';
import { preconditions } from '../http/conventions.ts';
import { createLogger } from '../http/logger.ts';
import { createIdentity, identityRoutes, type IdentityServices } from '../identity/index.ts';
import { withKid } from '../identity/secrets.ts';
import { keys, type Key } from '../store/keys.ts';
import { Store, type Item } from '../store/store.ts';
import { loadHierarchy } from './hierarchy.ts';
import { createTenancy, tenancyRoutes, type TenancyServices } from './index.ts';
import type { Hierarchy } from './model.ts';

export const ADMIN_KEY = 'test-admin-key-0123456789abcdef';
export const USER_TOKEN = 'plain-user-token-0123456789';

export interface Kit {
  t: TestTable;
  store: Store;
  h: Hierarchy;
  tenancy: TenancyServices;
  identity: IdentityServices;
  app: ReturnType<typeof createApp>;
  ctx: RequestContext;
  /** JSON request as the platform admin; returns status, headers and parsed body. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test responses are inspected loosely
  req(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }>;
  /** Every item of a partition (strongly consistent), for "nothing half-written" checks. */
  partition(pk: string): Promise<Item[]>;
  get(key: Key): Promise<Item | undefined>;
}

export async function createKit(hierarchyName: string, o: { logger?: Logger } = {}): Promise<Kit> {
  const t = await createTestTable();
  const store = new Store({ doc: t.doc, tableName: t.tableName, cursorSecret: 'kit-cursor-secret-0123456789' });
  const h = loadHierarchy(hierarchyName);
  const tenancy = createTenancy({ store, hierarchy: h });
  // Lower scrypt cost in tests only: the parameters travel with each hash.
  const identity = createIdentity({ store, hierarchy: h, dataKey: withKid(randomBytes(32)), scrypt: { N: 2 ** 14, r: 8, p: 1 } });
  const plainUser = async (credential: string) =>
    credential === USER_TOKEN ? { actor: { id: 'plain-user', type: 'user' as const }, platformAdmin: false } : undefined;
  const app = createApp({
    version: 'test',
    dynamoEndpoint: t.endpoint,
    tableName: t.tableName,
    logger: o.logger ?? createLogger('silent'),
    middleware: [authenticate([bootstrapKeyAuthenticator(ADMIN_KEY), plainUser]), preconditions()],
    routes: [tenancyRoutes(tenancy), identityRoutes({ identity, tenancy })],
  });
  const req: Kit['req'] = async (method, path, body, headers = {}) => {
    const res = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  };
  return {
    t,
    store,
    h,
    tenancy,
    identity,
    app,
    ctx: systemContext('test'),
    req,
    partition: (pk) => store.queryAll<Item>({ pk }),
    get: (key) => store.get<Item>(key),
  };
}

/** Items of the base table under a key, minus the audit shards (those are the only extra writes). */
export const keysOf = (items: Item[]) => items.map((i) => `${i.PK} | ${i.SK}`).sort();
export { keys };
