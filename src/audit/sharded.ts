/**
 * Reading a sharded partition (principle 9) as if it were one: every shard is queried in ONE
 * parallel wave and the results are merged by sort key. The cursor is composite — each shard's
 * position (the sort key of the last item emitted from it, or "done") — and signed with the
 * store's cursor codec, bound to the query, so it cannot be forged or replayed on another query.
 *
 * Continuing a shard re-queries it with the range closed at the last emitted key (BETWEEN is
 * inclusive) and drops that one item: no raw ExclusiveStartKey is needed, and GSI and base-table
 * shards work alike.
 */
import { GatehouseError } from '../errors.ts';
import { CursorCodec } from '../store/cursor.ts';
import type { Condition, Item, Page, Store } from '../store/store.ts';
import type { IndexName } from '../store/table.ts';

export interface ShardedQuery {
  index?: IndexName;
  /** One partition key per shard. */
  pks: string[];
  /** Inclusive sort-key bounds. */
  range: [string, string];
  /** Newest / highest first when false. */
  ascending: boolean;
  limit: number;
  cursor?: string | null;
  filter?: Condition;
}

/** null: not started; string: the last emitted sort key; 1: exhausted. */
type ShardState = string | null | 1;

const skAttr = (index?: IndexName) => (index ? `${index}SK` : 'SK');

function binding(q: ShardedQuery) {
  return CursorCodec.binding({ sharded: 1, i: q.index ?? '', pks: q.pks, r: q.range, a: q.ascending, f: q.filter ?? null });
}

function decodeStates(store: Store, q: ShardedQuery): ShardState[] {
  if (!q.cursor) return q.pks.map(() => null);
  const payload = store.cursors.decode(q.cursor, binding(q));
  const s = (payload as { s?: unknown }).s;
  if (!Array.isArray(s) || s.length !== q.pks.length || !s.every((x) => x === null || x === 1 || typeof x === 'string')) {
    throw new GatehouseError('INVALID_CURSOR', 'The cursor is not valid for this request (malformed); start again without a cursor', {
      errors: [{ field: 'cursor', message: 'malformed' }],
    });
  }
  return s as ShardState[];
}

/** One page over all shards: one parallel wave of Queries, merged by sort key. */
export async function shardedPage<T = Item>(store: Store, q: ShardedQuery): Promise<Page<T>> {
  if (q.range[0] > q.range[1]) return { items: [], cursor: null };
  const states = decodeStates(store, q);
  const sk = skAttr(q.index);
  const results = await Promise.all(
    q.pks.map(async (pk, i) => {
      const st = states[i];
      if (st === 1) return { items: [] as Item[], more: false };
      const range: [string, string] = st === null ? q.range : q.ascending ? [st, q.range[1]] : [q.range[0], st];
      const page = await store.query<Item>({
        index: q.index,
        pk,
        sk: { between: range },
        ascending: q.ascending,
        limit: st === null ? q.limit : q.limit + 1,
        filter: q.filter,
      });
      const items = st === null ? page.items : page.items.filter((it) => it[sk] !== st);
      return { items, more: page.cursor !== null };
    }),
  );
  const all = results.flatMap((r, shard) => r.items.map((item) => ({ item, shard, key: String(item[sk]) })));
  all.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) * (q.ascending ? 1 : -1));
  const emitted = all.slice(0, q.limit);
  const next: ShardState[] = states.slice();
  const emittedPerShard = new Map<number, { count: number; last: string }>();
  for (const e of emitted) {
    const cur = emittedPerShard.get(e.shard);
    emittedPerShard.set(e.shard, { count: (cur?.count ?? 0) + 1, last: e.key });
  }
  results.forEach((r, shard) => {
    if (states[shard] === 1) return;
    const em = emittedPerShard.get(shard);
    if (!r.more && (em?.count ?? 0) === r.items.length) next[shard] = 1;
    else if (em) next[shard] = em.last;
  });
  const done = next.every((s) => s === 1);
  return { items: emitted.map((e) => e.item as T), cursor: done ? null : store.cursors.encode({ s: next }, binding(q)) };
}

/**
 * Every item of all shards in merged order, streamed: a k-way merge that refills only the shard
 * whose buffer ran dry, so each item is read once (for exports; pages use shardedPage).
 */
export async function* shardedStream<T = Item>(store: Store, q: Omit<ShardedQuery, 'limit' | 'cursor'> & { pageSize?: number }): AsyncGenerator<T> {
  if (q.range[0] > q.range[1]) return;
  const sk = skAttr(q.index);
  const pageSize = q.pageSize ?? 200;
  const fetch = (pk: string, cursor: string | null | undefined) =>
    store.query<Item>({ index: q.index, pk, sk: { between: q.range }, ascending: q.ascending, limit: pageSize, cursor, filter: q.filter });
  const shards = await Promise.all(q.pks.map(async (pk) => ({ pk, ...(await fetch(pk, undefined)) })));
  const before = (a: string, b: string) => (q.ascending ? a < b : a > b);
  for (;;) {
    let best = -1;
    for (let i = 0; i < shards.length; i++) {
      const s = shards[i];
      while (s.items.length === 0 && s.cursor) Object.assign(s, await fetch(s.pk, s.cursor));
      if (s.items.length && (best < 0 || before(String(s.items[0][sk]), String(shards[best].items[0][sk])))) best = i;
    }
    if (best < 0) return;
    yield shards[best].items.shift() as T;
  }
}
