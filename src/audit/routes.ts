/** HTTP routes of the audit trail: a tenant's records by date, a user's activity, streamed export. */
import { createRoute, z } from '@hono/zod-openapi';
import { authorize } from '../http/caller.ts';
import { bearer, errorResponses, jsonResponse, listOf } from '../http/common.ts';
import type { RouteModule } from '../http/deps.ts';
import { pathParam, PathTenant, RangeQuery, Timestamp } from '../entitlements/http.ts';
import { contentTypeOf, type ExportFormat } from './export.ts';
import { checkRange, type AuditService } from './service.ts';

export const AUDIT_PERMISSIONS = { read: 'gatehouse:audit:read', platformAdmin: 'gatehouse:platform:admin' } as const;

export const AuditRecordSchema = z
  .object({
    id: z.string(),
    at: Timestamp,
    tenantId: z.string(),
    actorId: z.string(),
    actorType: z.string(),
    action: z.string().openapi({ example: 'license.seat.assign' }),
    entityType: z.string(),
    entityId: z.string(),
    before: z.record(z.string(), z.unknown()).optional(),
    after: z.record(z.string(), z.unknown()).optional(),
    related: z.record(z.string(), z.unknown()).optional(),
    requestId: z.string().optional(),
    ip: z.string().optional(),
    userAgent: z.string().optional(),
    status: z.enum(['success', 'failure', 'error']),
    severity: z.enum(['info', 'warning', 'critical']),
    expiresAt: z.number().int().openapi({ description: 'TTL, epoch seconds (one year)' }),
  })
  .openapi('AuditRecord');

const AuditPage = listOf(AuditRecordSchema, 'AuditPage');

/** Chunks of about 64 KB: fewer, larger writes to the socket. */
function toStream(lines: AsyncGenerator<string>, first: IteratorResult<string>): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  let pending: IteratorResult<string> | undefined = first;
  return new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      let chunk = '';
      while (chunk.length < 64 * 1024) {
        const r = pending ?? (await lines.next());
        pending = undefined;
        if (r.done) {
          if (chunk) ctrl.enqueue(enc.encode(chunk));
          ctrl.close();
          return;
        }
        chunk += r.value;
      }
      ctrl.enqueue(enc.encode(chunk));
    },
    async cancel() {
      await lines.return(undefined);
    },
  });
}

export const auditRoutes = (d: { audit: AuditService }): RouteModule => (app) => {
  const tags = ['audit'];
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/audit', tags, security: bearer,
      summary: "A tenant's audit records in a date range, newest first (every shard in one parallel wave per page)",
      middleware: [authorize(AUDIT_PERMISSIONS.read)] as const,
      request: { params: PathTenant, query: RangeQuery },
      responses: { 200: jsonResponse(AuditPage, 'A page of audit records'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => c.json(await d.audit.range(c.req.valid('param').tenantId, c.req.valid('query')), 200),
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/audit/export', tags, security: bearer,
      summary: "Export a tenant's audit records in a date range (newest first), streamed as JSON Lines or CSV",
      middleware: [authorize(AUDIT_PERMISSIONS.read)] as const,
      request: {
        params: PathTenant,
        query: z.object({
          format: z.enum(['jsonl', 'csv']).default('jsonl').openapi({ param: { name: 'format', in: 'query' } }),
          from: RangeQuery.shape.from,
          to: RangeQuery.shape.to,
        }),
      },
      responses: {
        200: {
          description: 'The records, one per line (CSV: a header row first)',
          content: { 'application/x-ndjson': { schema: z.string() }, 'text/csv': { schema: z.string() } },
        },
        ...errorResponses(400, 401, 403),
      },
    }),
    async (c) => {
      const { tenantId } = c.req.valid('param');
      const q = c.req.valid('query');
      checkRange(q);
      const format = q.format as ExportFormat;
      const lines = d.audit.exportLines(tenantId, { from: q.from, to: q.to, format });
      // The first read happens before the response starts, so its failure is a problem document.
      const first = await lines.next();
      return new Response(toStream(lines, first), {
        status: 200,
        headers: {
          'content-type': contentTypeOf(format),
          'content-disposition': `attachment; filename="audit-${tenantId.replace(/[^A-Za-z0-9_-]/g, '_')}.${format}"`,
          'cache-control': 'no-store',
        },
      }) as never;
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/users/{userId}/activity', tags, security: bearer,
      summary: "What a user did in the tenant, newest first (GSI2 USER#<uid>#AUDIT; an index, not a filter over the tenant's trail)",
      middleware: [authorize(AUDIT_PERMISSIONS.read)] as const,
      request: {
        params: PathTenant.extend({ userId: pathParam('userId', 'A user id, or an API key id with actorType=apiKey') }),
        query: RangeQuery.extend({ actorType: z.enum(['user', 'apiKey']).optional().openapi({ param: { name: 'actorType', in: 'query' }, description: "apiKey: an API key's (sharded) activity" }) }),
      },
      responses: { 200: jsonResponse(AuditPage, 'A page of audit records'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => {
      const p = c.req.valid('param');
      return c.json(await d.audit.activity(p.userId, { ...c.req.valid('query'), tenantId: p.tenantId }), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/audit', tags, security: bearer, summary: 'Platform-level audit records (catalog, global roles, …), newest first (platform admin)',
      middleware: [authorize(AUDIT_PERMISSIONS.platformAdmin)] as const,
      request: { query: RangeQuery },
      responses: { 200: jsonResponse(AuditPage, 'A page of audit records'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => c.json(await d.audit.platformRange(c.req.valid('query')), 200),
  );
};
