/**
 * Mail transports: Amazon SES v2 in production, a local outbox in development that stores each
 * message in the table (listed through GET /v1/outbox). Both answer with a message id.
 */
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { ulid } from 'ulid';
import { keys } from '../store/keys.ts';
import type { Item, Page, Store } from '../store/store.ts';
import { epochSeconds, publicOf } from '../entitlements/common.ts';

export interface MailMessage {
  from: string;
  to: { email: string; name?: string };
  subject: string;
  text: string;
  html?: string;
  /** The tenant the message concerns (outbox partition; SES ignores it). */
  tenantId?: string;
}

export interface Mailer {
  readonly name: string;
  /** Resolves with the transport's message id; rejects when the message was not accepted. */
  send(message: MailMessage): Promise<{ messageId: string }>;
}

/** Amazon SES v2 (region and credentials from the usual AWS configuration). */
export function createSesMailer(opts: { client?: SESv2Client; region?: string; configurationSetName?: string } = {}): Mailer {
  const client = opts.client ?? new SESv2Client({ ...(opts.region ? { region: opts.region } : {}) });
  return {
    name: 'ses',
    async send(m) {
      const to = m.to.name ? `"${m.to.name.replaceAll('"', '')}" <${m.to.email}>` : m.to.email;
      const out = await client.send(
        new SendEmailCommand({
          FromEmailAddress: m.from,
          Destination: { ToAddresses: [to] },
          Content: {
            Simple: {
              Subject: { Data: m.subject, Charset: 'UTF-8' },
              Body: { Text: { Data: m.text, Charset: 'UTF-8' }, ...(m.html ? { Html: { Data: m.html, Charset: 'UTF-8' } } : {}) },
            },
          },
          ...(opts.configurationSetName ? { ConfigurationSetName: opts.configurationSetName } : {}),
        }),
      );
      if (!out.MessageId) throw new Error('SES accepted the message without a MessageId');
      return { messageId: out.MessageId };
    },
  };
}

export const OUTBOX_TTL_DAYS = 30;

export interface OutboxMessage extends MailMessage {
  id: string;
  sentAt: string;
  tenantId: string;
}

/** Development transport: each message becomes an outbox item (kept 30 days). */
export function createOutboxMailer(store: Store): Mailer {
  return {
    name: 'outbox',
    async send(m) {
      const now = store.now();
      const id = ulid(now.getTime());
      const sentAt = now.toISOString();
      const tenant = m.tenantId ?? 'all';
      await store.put(
        { ...keys.outboxMessage(tenant, sentAt, id), ...keys.outboxIndex(sentAt, id), Type: 'OutboxMessage', id, sentAt, ...m, tenantId: tenant, expiresAt: epochSeconds(now) + OUTBOX_TTL_DAYS * 86400 },
        { ifNotExists: true },
      );
      return { messageId: `outbox-${id}` };
    },
  };
}

/** Newest first; one tenant's partition, or every message (GSI1). */
export async function listOutbox(store: Store, o: { tenantId?: string; limit?: number; cursor?: string | null } = {}): Promise<Page<OutboxMessage>> {
  const q: { index?: 'GSI1'; pk: string } = o.tenantId ? keys.outboxOfTenant(o.tenantId) : keys.outboxAll();
  const page = await store.query<Item>({ index: q.index, pk: q.pk, ascending: false, limit: o.limit, cursor: o.cursor });
  return { items: page.items.map((i) => publicOf<OutboxMessage>(i)), cursor: page.cursor };
}

/** Chooses the transport: `ses` in production, the outbox otherwise (GATEHOUSE_MAIL_TRANSPORT overrides). */
export function mailerFromEnv(store: Store, env: NodeJS.ProcessEnv = process.env): Mailer {
  const choice = env.GATEHOUSE_MAIL_TRANSPORT ?? (env.NODE_ENV === 'production' ? 'ses' : 'outbox');
  if (choice === 'ses') return createSesMailer({ region: env.AWS_REGION, configurationSetName: env.GATEHOUSE_SES_CONFIGURATION_SET });
  if (choice === 'outbox') return createOutboxMailer(store);
  throw new Error(`GATEHOUSE_MAIL_TRANSPORT must be ses or outbox, not "${choice}"`);
}
