/** A test HTTP app over the entitlement routes: bearer `user:<id>` authenticates a platform admin acting as user <id>. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createApp } from '../http/app.ts';
import { authenticate } from '../http/auth.ts';
import { createLogger } from '../http/logger.ts';
import { Store } from '../store/store.ts';
import type { Hierarchy } from '../tenancy/model.ts';
import type { TestTable } from '../../test/harness.ts';
import { createEntitlements, type EntitlementsDeps } from './index.ts';

export function buildTestApp(t: TestTable, h: Hierarchy, o: { doc?: DynamoDBDocumentClient } & Partial<EntitlementsDeps> = {}) {
  const store = new Store({ doc: o.doc ?? t.doc, tableName: t.tableName, cursorSecret: 'fixture-secret-0123456789' });
  const { doc: _doc, ...rest } = o;
  const ent = createEntitlements({ productRoutes: true, ...rest, store, hierarchy: h });
  const app = createApp({
    version: 'test',
    dynamoEndpoint: t.endpoint,
    tableName: t.tableName,
    logger: createLogger('silent'),
    middleware: [authenticate([async (cred) => (cred.startsWith('user:') ? { actor: { id: cred.slice(5), type: 'user' as const }, platformAdmin: true } : undefined)])],
    routes: ent.routes,
  });
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}, as = 'admin-1') => {
    const res = await app.request(path, {
      method,
      headers: { authorization: `Bearer user:${as}`, 'user-agent': 'vitest-http', 'x-forwarded-for': '198.51.100.9', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json: json as Record<string, unknown> & { items?: Record<string, unknown>[]; errors?: { field: string }[] } };
  };
  return { app, ent, store, call };
}
