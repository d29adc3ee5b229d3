/**
 * The license-expiry job (`gatehouse jobs license-expiry --within 30d`, or the scheduled Lambda):
 *  1. reads the active licenses ending within the window (GSI3, every shard in one wave), then
 *     re-reads them from the base table (strongly consistent: GSI3 may lag a renewal);
 *  2. flips those already past their end to `expired` (with their audit record);
 *  3. e-mails each remaining license's tenant admins, once per (license, threshold, recipient).
 * Every attempt lands in the notification audit: sent (message id), failed (error) or skipped
 * (reason). Idempotency: a guard item per (license, threshold, recipient) is claimed with a lease
 * before sending and marked `sent` in the same transaction as the 'sent' record, so a rerun skips
 * it, a concurrent run cannot send it twice, and a failed send is claimable again on the next run.
 */
import { ulid } from 'ulid';
import { systemContext, type RequestContext } from '../context.ts';
import { GatehouseError } from '../errors.ts';
import { allShards, keys, SHARDS } from '../store/keys.ts';
import { tx, type Item } from '../store/store.ts';
import { DAY_MS, type ServiceDeps } from '../entitlements/common.ts';
import { createLicenseService, type License } from '../entitlements/licenses.ts';
import { createNotificationAudit, type DeliveryStatus } from './audit.ts';
import { defaultRecipients, type Recipient, type RecipientResolver } from './recipients.ts';
import type { MailMessage, Mailer } from './transport.ts';

export const NOTIFICATION_TYPE = 'license_expiry';
export const DEFAULT_SENDER = 'no-reply@gatehouse.local';

export interface LicenseExpiryDeps extends ServiceDeps {
  mailer: Mailer;
  recipients?: RecipientResolver;
  /** The From address (GATEHOUSE_MAIL_FROM). */
  sender?: string;
  /** How long a claimed notice stays reserved for the run that claimed it. */
  leaseMs?: number;
}

export interface LicenseExpiryOptions {
  /** The window, e.g. `30d`, `12h`, `2w`. */
  within: string;
  /** The notice threshold the idempotency guard is keyed by; defaults to the window (`30d`). */
  threshold?: string;
  /** Report what would happen; write and send nothing. */
  dryRun?: boolean;
  /** Sends in flight at once. */
  concurrency?: number;
  /** Called after each license is handled (progress). */
  onProgress?: (done: number, total: number) => void;
}

export interface NoticeOutcome {
  licenseId: string;
  tenantId: string;
  recipient?: string;
  status: DeliveryStatus | 'would-send';
  messageId?: string;
  error?: string;
  reason?: string;
}

export interface LicenseExpirySummary {
  runId: string;
  now: string;
  horizon: string;
  threshold: string;
  licenses: number;
  expired: string[];
  sent: number;
  failed: number;
  skipped: number;
  notices: NoticeOutcome[];
}

/** `30d` / `12h` / `2w` → milliseconds. */
export function parseWindow(s: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([dhw])$/i.exec(s.trim());
  if (!m || Number(m[1]) <= 0) throw new GatehouseError('VALIDATION', `--within must look like 30d, 12h or 2w, not "${s}"`, { errors: [{ field: 'within', message: 'Use <n>d, <n>h or <n>w' }] });
  const unit = { d: DAY_MS, h: 3600_000, w: 7 * DAY_MS }[m[2].toLowerCase() as 'd' | 'h' | 'w'];
  return Number(m[1]) * unit;
}

export function licenseExpiryMessage(a: { from: string; tenantId: string; tenantName: string; license: License; to: Recipient; now: Date }): MailMessage {
  const days = Math.max(0, Math.ceil((Date.parse(a.license.endDate) - a.now.getTime()) / DAY_MS));
  const what = a.license.name ?? (a.license.productId ? `product ${a.license.productId}` : `enterprise ${a.license.enterpriseId}`);
  const hello = a.to.firstName ? `Hello ${a.to.firstName},` : 'Hello,';
  return {
    from: a.from,
    to: { email: a.to.email, name: [a.to.firstName, a.to.lastName].filter(Boolean).join(' ') || undefined },
    tenantId: a.tenantId,
    subject: `${a.tenantName}: your ${what} license expires in ${days} day${days === 1 ? '' : 's'}`,
    text: [
      hello,
      '',
      `The license for ${what} held by ${a.tenantName} ends on ${a.license.endDate.slice(0, 10)} (${days} day${days === 1 ? '' : 's'} from now).`,
      `Seats in use: ${a.license.seatsUsed} of ${a.license.seats}.`,
      '',
      'Renew it before that date to keep access for its users.',
      '',
      `License id: ${a.license.id}`,
    ].join('\n'),
  };
}

async function pool<T>(items: T[], n: number, fn: (t: T) => Promise<void>) {
  let i = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (i < items.length) await fn(items[i++]);
  }));
}

export async function runLicenseExpiry(deps: LicenseExpiryDeps, opts: LicenseExpiryOptions): Promise<LicenseExpirySummary> {
  const { store, hierarchy: h } = deps;
  const T = h.T;
  const windowMs = parseWindow(opts.within);
  const threshold = opts.threshold ?? opts.within.trim().toLowerCase();
  const now = deps.now();
  const nowIso = now.toISOString();
  const horizon = new Date(now.getTime() + windowMs).toISOString();
  const runId = ulid(now.getTime());
  const ctx: RequestContext = systemContext(`job-license-expiry-${runId}`);
  const licenses = createLicenseService(deps);
  const naudit = createNotificationAudit({ store, T, now: deps.now });
  const recipientsOf = deps.recipients ?? defaultRecipients(store, T);
  const from = deps.sender ?? DEFAULT_SENDER;
  const leaseMs = deps.leaseMs ?? 10 * 60_000;

  const summary: LicenseExpirySummary = { runId, now: nowIso, horizon, threshold, licenses: 0, expired: [], sent: 0, failed: 0, skipped: 0, notices: [] };
  const outcome = (o: NoticeOutcome) => {
    summary.notices.push(o);
    if (o.status === 'sent') summary.sent++;
    else if (o.status === 'failed') summary.failed++;
    else if (o.status === 'skipped') summary.skipped++;
  };

  // 1. Active licenses ending before the horizon: every shard in one wave (GSI3 is eventually
  //    consistent; each write below re-checks the license's state in its condition).
  const shards = await Promise.all(
    allShards(SHARDS.licenseStatus).map((s) => {
      const q = keys.licensesByStatusShard('active', s);
      return store.queryAll<License & Item>({ index: q.index, pk: q.pk, sk: { between: keys.licenseEndRange(horizon) } });
    }),
  );
  // GSI3 may lag a renewal or an expiry: re-read the licenses from the base table (one wave).
  const listed = shards.flat();
  const current = await store.batchGet<License & Item>(listed.map((l) => keys.license(T, l.tenantId, l.id)));
  const found = current.filter((l) => l.status === 'active' && l.endDate <= horizon).sort((a, b) => (a.endDate < b.endDate ? -1 : 1));
  summary.licenses = found.length;

  // 2. Past their end: flip to expired.
  const ended = found.filter((l) => l.endDate <= nowIso);
  const expiring = found.filter((l) => l.endDate > nowIso);
  if (!opts.dryRun) {
    await pool(ended, 8, async (l) => {
      if (await licenses.expire(ctx, l.tenantId, l.id)) summary.expired.push(l.id);
    });
  } else summary.expired.push(...ended.map((l) => l.id));

  // 3. Tenants and their recipients (one wave), then every guard (one wave).
  const tenantIds = [...new Set(expiring.map((l) => l.tenantId))];
  const [tenants, recipientLists] = await Promise.all([
    store.batchGet<Item>(tenantIds.map((t) => keys.tenant(T, t))),
    Promise.all(tenantIds.map((t) => recipientsOf(t))),
  ]);
  const tenantName = new Map(tenants.map((t) => [String(t.id), String(t.name ?? t.id)]));
  const recipients = new Map(tenantIds.map((t, i) => [t, recipientLists[i]]));
  const guardKey = (l: License, r: Recipient) => keys.notice(l.id, threshold, r.email.toLowerCase());
  const guards = await store.batchGet<Item>(expiring.flatMap((l) => (recipients.get(l.tenantId) ?? []).map((r) => guardKey(l, r))));
  const guardOf = new Map(guards.map((g) => [`${g.PK}\u0000${g.SK}`, g]));

  const record = (l: License, r: Recipient | undefined, status: DeliveryStatus, extra: { messageId?: string; errorMessage?: string; skipReason?: string; subject?: string } = {}) =>
    naudit.record({
      notificationType: NOTIFICATION_TYPE,
      deliveryStatus: status,
      tenantId: l.tenantId,
      tenantName: tenantName.get(l.tenantId),
      userId: r?.userId,
      recipientEmail: r?.email,
      recipientFirstName: r?.firstName,
      recipientLastName: r?.lastName,
      senderEmail: from,
      transport: deps.mailer.name,
      metadata: { licenseId: l.id, threshold, endDate: l.endDate, runId },
      ...extra,
    });

  const skip = async (l: License, r: Recipient | undefined, reason: string) => {
    if (!opts.dryRun) await store.transactWrite([record(l, r, 'skipped', { skipReason: reason })]);
    outcome({ licenseId: l.id, tenantId: l.tenantId, recipient: r?.email, status: 'skipped', reason });
  };

  let done = 0;
  await pool(expiring, opts.concurrency ?? 4, async (l) => {
    const rs = recipients.get(l.tenantId) ?? [];
    if (!tenantName.has(l.tenantId)) await skip(l, undefined, 'tenant not found');
    else if (rs.length === 0) await skip(l, undefined, 'no recipients: the tenant has no active admin with an e-mail');
    for (const r of tenantName.has(l.tenantId) ? rs : []) {
      const gk = guardKey(l, r);
      const guard = guardOf.get(`${gk.PK}\u0000${gk.SK}`);
      if (guard?.status === 'sent') {
        await skip(l, r, `already notified at ${String(guard.sentAt)}`);
        continue;
      }
      const message = licenseExpiryMessage({ from, tenantId: l.tenantId, tenantName: tenantName.get(l.tenantId)!, license: l, to: r, now });
      if (opts.dryRun) {
        outcome({ licenseId: l.id, tenantId: l.tenantId, recipient: r.email, status: 'would-send' });
        continue;
      }
      // Claim the notice: new, or not sent and no longer leased by another run.
      try {
        await store.put(
          { ...gk, Type: 'NoticeGuard', licenseId: l.id, tenantId: l.tenantId, threshold, recipient: r.email, status: 'sending', leaseUntil: new Date(deps.now().getTime() + leaseMs).toISOString(), attempts: ((guard?.attempts as number) ?? 0) + 1, runId },
          {
            condition: {
              expression: 'attribute_not_exists(#pk) OR (#s <> :sent AND #lease < :now)',
              names: { '#pk': 'PK', '#s': 'status', '#lease': 'leaseUntil' },
              values: { ':sent': 'sent', ':now': deps.now().toISOString() },
            },
          },
        );
      } catch (e) {
        if (e instanceof GatehouseError && e.code === 'CONFLICT') {
          await skip(l, r, 'already notified or being sent by another run');
          continue;
        }
        throw e;
      }
      try {
        const { messageId } = await deps.mailer.send(message);
        await store.transactWrite([
          tx.update(gk, { set: { status: 'sent', messageId, sentAt: deps.now().toISOString() }, remove: ['leaseUntil'] }),
          record(l, r, 'sent', { messageId, subject: message.subject }),
        ]);
        outcome({ licenseId: l.id, tenantId: l.tenantId, recipient: r.email, status: 'sent', messageId });
      } catch (e) {
        const error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
        await store.transactWrite([
          tx.update(gk, { set: { status: 'failed', lastError: error.slice(0, 1000), leaseUntil: '0' } }),
          record(l, r, 'failed', { errorMessage: error, subject: message.subject }),
        ]);
        outcome({ licenseId: l.id, tenantId: l.tenantId, recipient: r.email, status: 'failed', error });
      }
    }
    opts.onProgress?.(++done, expiring.length);
  });
  return summary;
}
