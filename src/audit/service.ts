/**
 * Reading the audit trail: a tenant's records in a date range (newest first, every shard in one
 * parallel wave per page), a user's activity (GSI2, no filter-after-fetch), and exports.
 */
import type { Hierarchy } from '../tenancy/model.ts';
import { allShards, keys, SHARDS } from '../store/keys.ts';
import type { Item, Page, Store } from '../store/store.ts';
import { validation } from '../errors.ts';
import { PLATFORM_AUDIT, type AuditSeverity, type AuditStatus } from './record.ts';
import { shardedPage, shardedStream } from './sharded.ts';
import { toCsvHeader, toCsvRow, toJsonLine, type ExportFormat } from './export.ts';

/** An audit record as the API shows it. */
export interface AuditRecord {
  id: string;
  at: string;
  tenantId: string;
  actorId: string;
  actorType: string;
  action: string;
  entityType: string;
  entityId: string;
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
  related?: Record<string, unknown>;
  requestId?: string;
  ip?: string;
  userAgent?: string;
  status: AuditStatus;
  severity: AuditSeverity;
  /** TTL (epoch seconds): the record disappears a year after it was written. */
  expiresAt: number;
}

export interface RangeOptions {
  from?: string;
  to?: string;
  limit?: number;
  cursor?: string | null;
}

export const toAuditRecord = (it: Item): AuditRecord => {
  const { PK: _pk, SK: _sk, GSI2PK: _g, GSI2SK: _gs, Type: _t, createdAt: _c, updatedAt: _u, version: _v, ...rest } = it;
  return rest as unknown as AuditRecord;
};

export function checkRange(o: RangeOptions) {
  for (const f of ['from', 'to'] as const) {
    const v = o[f];
    if (v !== undefined && Number.isNaN(Date.parse(v))) throw validation(f, 'Must be an ISO date or date-time');
  }
  if (o.from && o.to && o.from > o.to) throw validation('from', 'Must not be after `to`');
}

export interface AuditService {
  /** A tenant's records in [from, to], newest first: one parallel wave over all shards per page. */
  range(tenantId: string, o?: RangeOptions): Promise<Page<AuditRecord>>;
  /** Platform-level records (permission catalog, products, …). */
  platformRange(o?: RangeOptions): Promise<Page<AuditRecord>>;
  /**
   * What a user did, newest first (GSI2 `USER#<uid>#AUDIT`); `tenantId` keeps it to one tenant.
   * An API key's activity (`actorType: 'apiKey'`) is sharded: every shard in one wave.
   */
  activity(actorId: string, o?: RangeOptions & { tenantId?: string; actorType?: 'user' | 'apiKey' }): Promise<Page<AuditRecord>>;
  /** Every record of a tenant in [from, to], newest first, each read once. */
  stream(tenantId: string, o?: Omit<RangeOptions, 'limit' | 'cursor'>): AsyncGenerator<AuditRecord>;
  /** The same as text chunks: JSON Lines, or CSV with a header row. */
  exportLines(tenantId: string, o: Omit<RangeOptions, 'limit' | 'cursor'> & { format: ExportFormat }): AsyncGenerator<string>;
}

export function createAuditService(deps: { store: Store; hierarchy: Pick<Hierarchy, 'T'> }): AuditService {
  const { store } = deps;
  const T = deps.hierarchy.T;
  const shardPks = (t: string, tid: string) => allShards(SHARDS.audit).map((s) => keys.auditShard(t, tid, s).pk);

  const rangeOf = async (t: string, tid: string, o: RangeOptions) => {
    checkRange(o);
    const page = await shardedPage<Item>(store, {
      pks: shardPks(t, tid),
      range: keys.auditRange(o.from, o.to),
      ascending: false,
      limit: o.limit ?? 25,
      cursor: o.cursor,
    });
    return { items: page.items.map(toAuditRecord), cursor: page.cursor };
  };

  async function* stream(tenantId: string, o: Omit<RangeOptions, 'limit' | 'cursor'> = {}) {
    checkRange(o);
    for await (const it of shardedStream<Item>(store, { pks: shardPks(T, tenantId), range: keys.auditRange(o.from, o.to), ascending: false })) {
      yield toAuditRecord(it);
    }
  }

  return {
    range: (tenantId, o = {}) => rangeOf(T, tenantId, o),
    platformRange: (o = {}) => rangeOf(PLATFORM_AUDIT.T, PLATFORM_AUDIT.tenantId, o),
    async activity(userId, o = {}) {
      checkRange(o);
      const filter = o.tenantId ? { expression: '#t = :t', names: { '#t': 'tenantId' }, values: { ':t': o.tenantId } } : undefined;
      if (o.actorType === 'apiKey') {
        const page = await shardedPage<Item>(store, {
          index: 'GSI2',
          pks: allShards(SHARDS.actorAudit).map((s) => keys.auditOfActorShard(userId, s).pk),
          range: keys.timeRange(o.from, o.to),
          ascending: false,
          limit: o.limit ?? 25,
          cursor: o.cursor,
          filter,
        });
        return { items: page.items.map(toAuditRecord), cursor: page.cursor };
      }
      const q = keys.auditOfActor(userId);
      const page = await store.query<Item>({
        index: q.index,
        pk: q.pk,
        sk: { between: keys.timeRange(o.from, o.to) },
        ascending: false,
        limit: o.limit ?? 25,
        cursor: o.cursor,
        ...(filter ? { filter } : {}),
      });
      return { items: page.items.map(toAuditRecord), cursor: page.cursor };
    },
    stream,
    async *exportLines(tenantId, o) {
      if (o.format === 'csv') yield toCsvHeader();
      for await (const r of stream(tenantId, o)) yield o.format === 'csv' ? toCsvRow(r) : toJsonLine(r);
    },
  };
}
