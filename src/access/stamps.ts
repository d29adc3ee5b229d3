/**
 * Access version stamps. The decision cache is validated by reading the stamps a decision depends
 * on (one wave); every write that can change a decision bumps the right stamp in its own
 * transaction, so a revocation is seen by the very next check on every instance.
 *  - user stamp: the user's assignments, group memberships, status;
 *  - tenant stamp: the tenant's status, roles, groups, group roles, scope tree;
 *  - global stamp: global (system) roles and the permission catalog.
 * Tenant and global stamps are read by every check, so they are written to every shard and read
 * from one random shard: reads spread over partitions, writes (rare) pay N items.
 */
import { allShards, keys, SHARDS, type Key } from '../store/keys.ts';
import { LIMITS, tx, type Item, type Store, type TxAction } from '../store/store.ts';

const bump = (key: { PK: string; SK: string }): TxAction => tx.update(key, { add: { stamp: 1 } });

export const stamps = {
  bumpUser: (userId: string): TxAction[] => [bump(keys.userStamp(userId))],
  bumpTenant: (T: string, tenantId: string): TxAction[] => allShards(SHARDS.stampRead).map((s) => bump(keys.tenantStamp(T, tenantId, s))),
  bumpGlobal: (): TxAction[] => allShards(SHARDS.stampRead).map((s) => bump(keys.globalStamp(s))),
  /** The keys to read for validation: the user's, one tenant shard, one global shard. */
  readKeys: (T: string, tenantId: string, userId: string) => {
    const shard = Math.floor(Math.random() * SHARDS.stampRead);
    return [keys.userStamp(userId), keys.tenantStamp(T, tenantId, shard), keys.globalStamp(shard)];
  },
};

/** One (tenant, user)'s stamps as the cache compares them: `user|tenant|global`. */
export const stampString = (user: unknown, tenant: unknown, global: unknown) => `${Number(user ?? 0)}|${Number(tenant ?? 0)}|${Number(global ?? 0)}`;

export interface StampReaderOptions {
  /**
   * At most this many stamp BatchGetItem requests in flight; later reads queue and share the next
   * one. Default 2. 0 = no sharing at all: every read is its own BatchGetItem of three keys.
   */
  maxInFlight?: number;
  /** A queued read waits at most this long for a request in flight to return, then is sent anyway. Default 100 ms. */
  maxQueueMs?: number;
}

/**
 * Validation reads of the stamps, shared by concurrent checks: ONE BatchGetItem serves every check
 * that asked for its stamps before that request was sent (up to 100 keys; a user's or tenant's
 * stamp asked by several of them is read once). With fewer than `maxInFlight` requests in flight
 * a read is sent at once (after the current microtask turn, so checks started together share
 * it); otherwise it queues, and the queue goes out as one request as soon as a request returns —
 * or after `maxQueueMs` in any case, so one slow request never holds the others up for long.
 *
 * Freshness: a check only ever joins a request that has NOT been sent yet, so every value it gets
 * was read after the check started — a change committed before the check started (on any
 * instance) is seen, exactly as with a read of its own. A request already in flight is never
 * reused by a check that started after it was sent.
 *
 * Hot keys: the tenant and global stamps are read from one random shard per request (all shards
 * hold the same value: every bump writes them all in one transaction).
 */
export function createStampReader(store: Store, T: string, opts: StampReaderOptions = {}) {
  const shared = opts.maxInFlight !== 0;
  const maxInFlight = Math.max(1, opts.maxInFlight ?? 2);
  const maxQueueMs = opts.maxQueueMs ?? 100;
  interface Waiter {
    tenantId: string;
    userId: string;
    resolve: (stamps: string) => void;
    reject: (e: unknown) => void;
  }
  let queue: Waiter[] = [];
  let inFlight = 0;
  let scheduled = false;
  let valve: ReturnType<typeof setTimeout> | undefined;

  function schedule() {
    if (scheduled || queue.length === 0) return;
    if (inFlight < maxInFlight) {
      scheduled = true;
      queueMicrotask(() => {
        scheduled = false;
        if (inFlight < maxInFlight) send();
        else schedule();
      });
    } else if (!valve) {
      valve = setTimeout(() => {
        valve = undefined;
        send();
        schedule();
      }, maxQueueMs);
      valve.unref?.();
    }
  }

  /** One BatchGetItem of the global stamp (one random shard) and the given users' and tenants' stamps; settles every waiter. */
  function readBatch(batch: Waiter[], users: Set<string>, tenants: Set<string>): Promise<void> {
    const shard = Math.floor(Math.random() * SHARDS.stampRead);
    const globalKey = keys.globalStamp(shard);
    const keyList: Key[] = [globalKey, ...[...users].map((u) => keys.userStamp(u)), ...[...tenants].map((t) => keys.tenantStamp(T, t, shard))];
    return store.batchGet<Item>(keyList).then(
      (items) => {
        const value = new Map<string, unknown>();
        for (const it of items) value.set(`${String(it.PK)}\u0000${String(it.SK)}`, it.stamp);
        const of = (k: Key) => value.get(`${k.PK}\u0000${k.SK}`);
        const global = of(globalKey);
        for (const w of batch) w.resolve(stampString(of(keys.userStamp(w.userId)), of(keys.tenantStamp(T, w.tenantId, shard)), global));
      },
      (e: unknown) => {
        for (const w of batch) w.reject(e);
      },
    );
  }

  /** Sends the queue's first waiters (as many as one request holds) as one BatchGetItem. */
  function send() {
    if (queue.length === 0) return;
    if (valve && queue.length) {
      clearTimeout(valve);
      valve = undefined;
    }
    // 1 global key + the distinct users' + the distinct tenants' keys ≤ 100.
    const users = new Set<string>();
    const tenants = new Set<string>();
    let n = 0;
    for (; n < queue.length; n++) {
      const w = queue[n];
      const more = (users.has(w.userId) ? 0 : 1) + (tenants.has(w.tenantId) ? 0 : 1);
      if (1 + users.size + tenants.size + more > LIMITS.batchGetKeys) break;
      users.add(w.userId);
      tenants.add(w.tenantId);
    }
    const batch = queue.slice(0, n);
    queue = queue.slice(n);
    inFlight++;
    void readBatch(batch, users, tenants).finally(() => {
      inFlight--;
      schedule();
    });
    // Waiters left over (more than one request holds): another request if there is room.
    schedule();
  }

  return {
    /** The stamps (`user|tenant|global`) of (tenant, user), from a request sent after this call. */
    read(tenantId: string, userId: string): Promise<string> {
      return new Promise<string>((resolve, reject) => {
        const w = { tenantId, userId, resolve, reject };
        if (!shared) return void readBatch([w], new Set([userId]), new Set([tenantId]));
        queue.push(w);
        schedule();
      });
    },
  };
}
