/**
 * The notification audit (000): one record per delivery attempt — sent (with the message id),
 * failed (with the error) or skipped (with the reason). GSI1 lists all, GSI2 a tenant's by date,
 * GSI3 by status (sharded per principle 9; every shard read in one wave and merged by date).
 */
import { ulid } from 'ulid';
import { allShards, keys, SHARDS } from '../store/keys.ts';
import { tx, type Item, type Page, type Store, type TxAction } from '../store/store.ts';
import { validation } from '../errors.ts';
import { shardedPage } from '../audit/sharded.ts';
import { AUDIT_TTL_SECONDS } from '../audit/record.ts';
import { epochSeconds, publicOf } from '../entitlements/common.ts';

export const DELIVERY_STATUSES = ['sent', 'failed', 'skipped'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface NotificationAudit {
  id: string;
  notificationType: string;
  deliveryStatus: DeliveryStatus;
  tenantId: string;
  tenantName?: string;
  userId?: string;
  recipientEmail?: string;
  recipientFirstName?: string;
  recipientLastName?: string;
  senderEmail?: string;
  subject?: string;
  /** The transport's message id (SES MessageId, or the outbox id). */
  messageId?: string;
  transport?: string;
  errorMessage?: string;
  skipReason?: string;
  /** When the attempt was made. */
  sentAt: string;
  metadata?: Record<string, unknown>;
  createdAt: string;
}

export type NotificationAuditInput = Omit<NotificationAudit, 'id' | 'sentAt' | 'createdAt'>;

export interface RangePage {
  from?: string;
  to?: string;
  limit?: number;
  cursor?: string | null;
}

function checkRange(o: RangePage) {
  for (const f of ['from', 'to'] as const) if (o[f] !== undefined && Number.isNaN(Date.parse(o[f]!))) throw validation(f, 'Must be an ISO date or date-time');
}

export function createNotificationAudit(deps: { store: Store; T: string; now: () => Date }) {
  const { store, T } = deps;
  const toPublic = (i: Item) => publicOf<NotificationAudit>(i);
  return {
    /** The put action of one record (to join the transaction of what it describes). */
    record(input: NotificationAuditInput): TxAction {
      const now = deps.now();
      const id = ulid(now.getTime());
      const sentAt = now.toISOString();
      return tx.put(
        {
          ...keys.notificationAudit(id),
          ...keys.notificationAuditIndex(T, input.tenantId, input.deliveryStatus, sentAt, id),
          Type: 'NotificationAudit',
          id,
          sentAt,
          ...input,
          // Error texts come from transports: keep them short.
          ...(input.errorMessage ? { errorMessage: input.errorMessage.slice(0, 1000) } : {}),
          expiresAt: epochSeconds(now) + AUDIT_TTL_SECONDS,
        },
        { ifNotExists: true },
      );
    },

    /** All records, newest first (GSI1; ids are ULIDs, so id order is time order). */
    async all(o: RangePage = {}): Promise<Page<NotificationAudit>> {
      const q = keys.notificationAudits();
      const page = await store.query<Item>({ index: q.index, pk: q.pk, ascending: false, limit: o.limit, cursor: o.cursor });
      return { items: page.items.map(toPublic), cursor: page.cursor };
    },

    /** A tenant's records in [from, to], newest first (GSI2). */
    async ofTenant(tenantId: string, o: RangePage = {}): Promise<Page<NotificationAudit>> {
      checkRange(o);
      const q = keys.notificationsOfTenant(T, tenantId);
      const page = await store.query<Item>({ index: q.index, pk: q.pk, sk: { between: keys.timeRange(o.from, o.to) }, ascending: false, limit: o.limit, cursor: o.cursor });
      return { items: page.items.map(toPublic), cursor: page.cursor };
    },

    /** Records of one status in [from, to], newest first: every GSI3 shard in one wave. */
    async byStatus(status: DeliveryStatus, o: RangePage = {}): Promise<Page<NotificationAudit>> {
      checkRange(o);
      const page = await shardedPage<Item>(store, {
        index: 'GSI3',
        pks: allShards(SHARDS.notificationStatus).map((s) => keys.notificationsByStatusShard(status, s).pk),
        range: keys.timeRange(o.from, o.to),
        ascending: false,
        limit: o.limit ?? 25,
        cursor: o.cursor,
      });
      return { items: page.items.map(toPublic), cursor: page.cursor };
    },
  };
}

export type NotificationAuditService = ReturnType<typeof createNotificationAudit>;
