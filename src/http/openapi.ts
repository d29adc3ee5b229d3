import type { OpenAPIObjectConfigure } from '@hono/zod-openapi';
import { SECURITY_SCHEME } from './common.ts';
import type { AppEnv, AppHono } from './deps.ts';

export const TAGS = [
  { name: 'system', description: 'Health and service metadata' },
  { name: 'tenancy', description: 'Tenants and their scope tree' },
  { name: 'identity', description: 'Users, technical users, sessions' },
  { name: 'access', description: 'Permissions, roles, groups, assignments, checks' },
  { name: 'entitlements', description: 'Products, licenses, subscriptions, settings' },
  { name: 'audit', description: 'Audit log and notification deliveries' },
];

type DocConfig = Exclude<OpenAPIObjectConfigure<AppEnv, string>, (...args: never[]) => unknown>;

export const openApiConfig = (version: string): DocConfig => ({
  openapi: '3.1.0',
  info: {
    title: 'Gatehouse',
    version,
    description: 'Multi-tenant account and access management. Errors are RFC 9457 problem+json.',
  },
  tags: TAGS,
});

/** Registers the bearer scheme and serves the document, generated once from the registered routes. */
export function registerOpenApi(app: AppHono, version: string): void {
  app.openAPIRegistry.registerComponent('securitySchemes', SECURITY_SCHEME, {
    type: 'http',
    scheme: 'bearer',
    description: 'JWT or API key',
  });
  let doc: unknown;
  // Not app.doc31(): it answers a generation failure with the raw error as JSON.
  app.get('/openapi.json', (c) => c.json((doc ??= app.getOpenAPI31Document(openApiConfig(version))) as object));
}
