/**
 * Audit records are written in the same transaction as the mutation they describe (principle 6):
 * services append `auditPut(...)` to their TransactWrite, so a mutation and its record commit or
 * fail together. Records are spread over shards of the tenant's audit partition (principle 9) and
 * expire after a year through TTL.
 */
import { ulid } from 'ulid';
import type { RequestContext } from '../context.ts';
import { keys, shardOf, SHARDS } from '../store/keys.ts';
import { tx, type TxAction } from '../store/store.ts';

export type AuditSeverity = 'info' | 'warning' | 'critical';
export type AuditStatus = 'success' | 'failure' | 'error';

export interface AuditEvent {
  /** Tenant key prefix and id the record belongs to; platform-level changes use PLATFORM_AUDIT. */
  T: string;
  tenantId: string;
  /** e.g. `user.create`, `role.delete`. */
  action: string;
  entityType: string;
  entityId: string;
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
  severity?: AuditSeverity;
  status?: AuditStatus;
  related?: Record<string, unknown>;
}

/** Where platform-level changes (permission catalog, global roles, products) are audited. */
export const PLATFORM_AUDIT = { T: 'SYSTEM', tenantId: 'platform' } as const;

export const AUDIT_TTL_SECONDS = 365 * 24 * 3600;

const SECRET_FIELD = /pass(word)?|secret|token|hash|apikey|api_key|mfa_?secret|credential|private/i;
const KEY_FIELD = /^(PK|SK|GSI\dPK|GSI\dSK)$/;

/** A copy without secrets, key attributes or oversize values, for the before/after summary. */
export function redact(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') {
    return typeof value === 'string' && value.length > 512 ? `${value.slice(0, 512)}…` : value;
  }
  if (depth > 4) return '[…]';
  if (Array.isArray(value)) return value.slice(0, 50).map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (KEY_FIELD.test(k) || v === undefined) continue;
    out[k] = SECRET_FIELD.test(k) ? '[redacted]' : redact(v, depth + 1);
  }
  return out;
}

export function auditPut(ctx: RequestContext, e: AuditEvent, now: Date = new Date()): TxAction {
  const id = ulid(now.getTime());
  const at = now.toISOString();
  const shard = Math.floor(Math.random() * SHARDS.audit);
  const actorId = ctx.actor.type === 'system' ? undefined : ctx.actor.id;
  // An API key can write at a whole tenant's rate: its activity index is sharded (principle 9).
  const actorIndex = ctx.actor.type === 'apiKey' ? keys.auditIndexSharded(ctx.actor.id, shardOf(id, SHARDS.actorAudit), at, id) : keys.auditIndex(actorId, at, id);
  return tx.put(
    {
      ...keys.audit(e.T, e.tenantId, shard, at, id),
      ...actorIndex,
      Type: 'AuditRecord',
      id,
      tenantId: e.tenantId,
      at,
      actorId: ctx.actor.id,
      actorType: ctx.actor.type,
      action: e.action,
      entityType: e.entityType,
      entityId: e.entityId,
      before: e.before ? redact(e.before) : undefined,
      after: e.after ? redact(e.after) : undefined,
      related: e.related,
      requestId: ctx.requestId,
      ip: ctx.ip,
      userAgent: ctx.userAgent,
      status: e.status ?? 'success',
      severity: e.severity ?? 'info',
      expiresAt: Math.floor(now.getTime() / 1000) + AUDIT_TTL_SECONDS,
    },
    { ifNotExists: true },
  );
}
