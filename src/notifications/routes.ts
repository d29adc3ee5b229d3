/** HTTP routes of the notification audit and the development outbox. */
import { createRoute, z } from '@hono/zod-openapi';
import { authorize } from '../http/caller.ts';
import { bearer, errorResponses, jsonResponse, listOf, PaginationQuery } from '../http/common.ts';
import type { RouteModule } from '../http/deps.ts';
import { PathTenant, RangeQuery, Timestamp } from '../entitlements/http.ts';
import type { Store } from '../store/store.ts';
import { DELIVERY_STATUSES, type NotificationAuditService } from './audit.ts';
import { listOutbox } from './transport.ts';

export const NOTIFICATION_PERMISSIONS = { read: 'gatehouse:audit:read', platformAdmin: 'gatehouse:platform:admin' } as const;

const NotificationAuditSchema = z
  .object({
    id: z.string(),
    notificationType: z.string(),
    deliveryStatus: z.enum(DELIVERY_STATUSES),
    tenantId: z.string(),
    tenantName: z.string().optional(),
    userId: z.string().optional(),
    recipientEmail: z.string().optional(),
    recipientFirstName: z.string().optional(),
    recipientLastName: z.string().optional(),
    senderEmail: z.string().optional(),
    subject: z.string().optional(),
    messageId: z.string().optional(),
    transport: z.string().optional(),
    errorMessage: z.string().optional(),
    skipReason: z.string().optional(),
    sentAt: Timestamp,
    metadata: z.record(z.string(), z.unknown()).optional(),
    createdAt: Timestamp,
  })
  .openapi('NotificationAudit');

const OutboxMessageSchema = z
  .object({
    id: z.string(),
    sentAt: Timestamp,
    tenantId: z.string(),
    from: z.string(),
    to: z.object({ email: z.string(), name: z.string().optional() }),
    subject: z.string(),
    text: z.string(),
    html: z.string().optional(),
  })
  .openapi('OutboxMessage');

export const notificationsRoutes = (d: { notifications: NotificationAuditService; store: Store }): RouteModule => (app) => {
  const tags = ['audit'];
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/notifications', tags, security: bearer,
      summary: 'Notification deliveries, newest first: all (GSI1), or one status in a date range (GSI3, every shard in one wave; platform admin)',
      middleware: [authorize(NOTIFICATION_PERMISSIONS.platformAdmin)] as const,
      request: { query: RangeQuery.extend({ status: z.enum(DELIVERY_STATUSES).optional().openapi({ param: { name: 'status', in: 'query' } }) }) },
      responses: { 200: jsonResponse(listOf(NotificationAuditSchema, 'NotificationAuditPage'), 'A page of deliveries'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => {
      const q = c.req.valid('query');
      return c.json(q.status ? await d.notifications.byStatus(q.status, q) : await d.notifications.all(q), 200);
    },
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/tenants/{tenantId}/notifications', tags, security: bearer, summary: "A tenant's notification deliveries in a date range, newest first (GSI2)",
      middleware: [authorize(NOTIFICATION_PERMISSIONS.read)] as const,
      request: { params: PathTenant, query: RangeQuery },
      responses: { 200: jsonResponse(listOf(NotificationAuditSchema), 'A page of deliveries'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => c.json(await d.notifications.ofTenant(c.req.valid('param').tenantId, c.req.valid('query')), 200),
  );
  app.openapi(
    createRoute({
      method: 'get', path: '/v1/outbox', tags, security: bearer, summary: 'Messages the development outbox transport "sent", newest first (platform admin)',
      middleware: [authorize(NOTIFICATION_PERMISSIONS.platformAdmin)] as const,
      request: { query: PaginationQuery.extend({ tenantId: z.string().min(1).max(128).optional().openapi({ param: { name: 'tenantId', in: 'query' } }) }) },
      responses: { 200: jsonResponse(listOf(OutboxMessageSchema, 'OutboxPage'), 'A page of messages'), ...errorResponses(400, 401, 403) },
    }),
    async (c) => c.json(await listOutbox(d.store, c.req.valid('query')), 200),
  );
};
