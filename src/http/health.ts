import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps, RouteModule } from './deps.ts';

export const HealthSchema = z
  .object({
    status: z.literal('ok'),
    version: z.string(),
    dynamodb: z.object({ endpoint: z.string(), table: z.string() }),
    time: z.iso.datetime(),
  })
  .openapi('Health');

const route = createRoute({
  method: 'get',
  path: '/health',
  tags: ['system'],
  summary: 'Liveness, version and the DynamoDB table in use (no authentication)',
  responses: { 200: { description: 'The service is up', content: { 'application/json': { schema: HealthSchema } } } },
});

// /health is public: never echo credentials that may sit in an endpoint URL.
function publicEndpoint(endpoint: string): string {
  try {
    const url = new URL(endpoint);
    url.username = '';
    url.password = '';
    return url.href.replace(/\/$/, '');
  } catch {
    return endpoint;
  }
}

export const healthRoutes = (deps: Pick<AppDeps, 'version' | 'dynamoEndpoint' | 'tableName'>): RouteModule => (app) => {
  const dynamodb = { endpoint: publicEndpoint(deps.dynamoEndpoint), table: deps.tableName };
  app.openapi(route, (c) => c.json({ status: 'ok' as const, version: deps.version, dynamodb, time: new Date().toISOString() }, 200));
};
