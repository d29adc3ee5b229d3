/**
 * Test kit of the auth layer and the isolation suite: a Gatehouse app on a test table, with the
 * real domain services, the decision engine as authorizer, and the auth layer's middleware, plus
 * helpers to act as users (development-issuer JWTs) and API keys.
 */
import { createApp } from '../src/http/app.ts';
import { setAuthorizer } from '../src/http/caller.ts';
import type { RouteModule } from '../src/http/deps.ts';
import { createLogger } from '../src/http/logger.ts';
import { createAccess, accessRoutes, type Access } from '../src/access/index.ts';
import { createAuth, type Auth } from '../src/auth/index.ts';
import type { AuthConfig } from '../src/auth/config.ts';
import { systemContext } from '../src/context.ts';
import { Store } from '../src/store/store.ts';
import { loadHierarchy } from '../src/tenancy/hierarchy.ts';
import { createTenancy, type TenancyServices } from '../src/tenancy/index.ts';
import { IdentityRepository } from '../src/identity/repository.ts';
import { UserService } from '../src/identity/service.ts';
import { withKid } from '../src/identity/secrets.ts';
import { randomBytes } from 'node:crypto';
import type { Hierarchy } from '../src/tenancy/model.ts';
import type { TestTable } from './harness.ts';

export const ADMIN_KEY = 'gh_test_admin_key_0123456789abcdef';

export interface Kit {
  store: Store;
  hierarchy: Hierarchy;
  access: Access;
  tenancy: TenancyServices;
  identity: { users: UserService };
  auth: Auth;
  app: ReturnType<typeof createApp>;
  /** A development-issuer JWT for a user. */
  tokenFor(userId: string): Promise<string>;
  /** A request with `Authorization: Bearer <credential>` and a JSON body. */
  call(credential: string, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  tenantWithAdmin(name: string, roleId?: string): Promise<{ tenantId: string; userId: string; token: string }>;
}

/**
 * `full: true` mounts every domain's routes (what the composition root wires) — the isolation
 * suite and the SDK test run against the whole API; other tests mount access + auth only.
 */
export async function createKit(t: TestTable, o: { auth?: Partial<AuthConfig>; routes?: RouteModule[]; hierarchy?: string; full?: boolean } = {}): Promise<Kit> {
  const hierarchy = loadHierarchy(o.hierarchy ?? 'facilities');
  const store = new Store({ doc: t.doc, tableName: t.tableName });
  const access = createAccess({ store, hierarchy });
  const tenancy = createTenancy({ store, hierarchy });
  const identity = { users: new UserService(new IdentityRepository(store, hierarchy), hierarchy, { dataKey: withKid(randomBytes(32)), scrypt: { N: 1024, r: 8, p: 1 } }) };
  await access.bootstrap(systemContext());
  const auth = await createAuth({
    store,
    hierarchy,
    engine: access.engine,
    config: { adminApiKey: ADMIN_KEY, devIssuer: true, rateLimit: false, ...o.auth },
  });
  setAuthorizer(auth.authorizer);
  const app = createApp({
    version: 'test',
    dynamoEndpoint: t.endpoint,
    tableName: t.tableName,
    logger: createLogger('silent'),
    routes: [auth.routes, accessRoutes(access), ...(o.full ? await domainRoutes(store, hierarchy, tenancy) : []), ...(o.routes ?? [])],
    middleware: auth.middleware,
  });
  const tokenFor = async (userId: string) => (await auth.devIssuer!.issue({ sub: userId })).token;
  const call = (credential: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    Promise.resolve(
      app.request(path, {
        method,
        headers: { authorization: `Bearer ${credential}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      }),
    );
  return { store, hierarchy, access, tenancy, identity, auth, app, tokenFor, call, tenantWithAdmin };

  /** A tenant with a user holding `roleId` (default tenant-admin) at the tenant scope. */
  async function tenantWithAdmin(name: string, roleId = 'tenant-admin') {
    const ctx = systemContext();
    const tenant = await tenancy.tenants.create(ctx, { name });
    const user = await identity.users.create(ctx, tenant.id, { email: `${name.toLowerCase().replace(/[^a-z0-9]/g, '')}-${roleId}@example.com` } as never);
    await access.assignments.create(ctx, tenant.id, { userId: user.id, roleId, scope: { kind: hierarchy.tenantKind, id: tenant.id } });
    return { tenantId: tenant.id, userId: user.id, token: await tokenFor(user.id) };
  }
}

/** The other domains' route modules, composed as the composition root does. */
async function domainRoutes(store: Store, hierarchy: Hierarchy, tenancy: TenancyServices): Promise<RouteModule[]> {
  const { createIdentity, identityRoutes } = await import('../src/identity/index.ts');
  const { tenancyRoutes } = await import('../src/tenancy/index.ts');
  const { createEntitlements } = await import('../src/entitlements/index.ts');
  const identity = createIdentity({ store, hierarchy, dataKey: withKid(randomBytes(32)), scrypt: { N: 1024, r: 8, p: 1 } });
  const entitlements = createEntitlements({ store, hierarchy });
  return [tenancyRoutes(tenancy), identityRoutes({ identity, tenancy }), ...entitlements.routes];
}
