/**
 * One page over several sorted partitions read in ONE parallel wave and merged by sort key:
 * the sharded `USER#STATUS#<s>#<n>` partitions (principle 9) and "recent nodes of every kind"
 * (GSI4 sorts within a kind). The cursor (signed like every cursor) holds each stream's position:
 * its last emitted sort key plus the items already emitted with that key, so ties are neither
 * lost nor repeated even though an index returns equal keys in no defined order.
 */
import { CursorCodec } from '../store/cursor.ts';
import type { IndexName } from '../store/table.ts';
import type { Item, Page, SortCondition, Store } from '../store/store.ts';

export interface Stream {
  /** Stable name of the stream within the merged query (e.g. the shard number). */
  id: string;
  index?: IndexName;
  pk: string;
  /** Inclusive bounds of the sort key; default: everything under `prefix`. */
  lower?: string;
  upper?: string;
  prefix?: string;
  filter?: { expression: string; names?: Record<string, string>; values?: Record<string, unknown> };
}

interface Position {
  sk: string;
  seen: string[];
}
type Positions = Record<string, Position | 'done' | null>;

const HIGH = '\uffff';
const uid = (it: Item) => `${it.PK}\u0000${it.SK}`;

function skCondition(lower: string | undefined, upper: string | undefined): SortCondition | undefined {
  if (lower !== undefined && upper !== undefined) return { between: [lower, upper] };
  if (lower !== undefined) return { gte: lower };
  if (upper !== undefined) return { lte: upper };
  return undefined;
}

export async function mergedPage<T extends Item>(
  store: Store,
  streams: Stream[],
  o: {
    limit: number;
    cursor?: string | null;
    ascending: boolean;
    /** The index sort-key attribute (positions within a stream). */
    skAttr: string;
    /** What the merged order compares (default: the sort key); e.g. `createdAt` across kinds. */
    orderBy?: (it: Item) => string;
    binding: unknown;
  },
): Promise<Page<T>> {
  const binding = CursorCodec.binding({ merged: o.binding, streams: streams.map((s) => [s.id, s.index, s.pk, s.lower, s.upper, s.prefix]), a: o.ascending });
  const positions: Positions = o.cursor ? (store.cursors.decode(o.cursor, binding).p as Positions) : Object.fromEntries(streams.map((s) => [s.id, null]));

  const live = streams.filter((s) => positions[s.id] !== 'done');
  const pages = await Promise.all(
    live.map(async (s) => {
      const pos = positions[s.id] as Position | null;
      let lower = s.lower ?? (s.prefix ? s.prefix : undefined);
      let upper = s.upper ?? (s.prefix ? s.prefix + HIGH : undefined);
      if (pos) {
        if (o.ascending) lower = pos.sk;
        else upper = pos.sk;
      }
      const seen = new Set(pos?.seen ?? []);
      const page = await store.query<Item>({ index: s.index, pk: s.pk, sk: skCondition(lower, upper), ascending: o.ascending, limit: o.limit + seen.size, filter: s.filter });
      return { s, items: page.items.filter((it) => !seen.has(uid(it))), more: page.cursor !== null, pos };
    }),
  );

  const sk = (it: Item) => String(it[o.skAttr] ?? '');
  const key = o.orderBy ?? sk;
  const all = pages.flatMap((p) => p.items.map((it) => ({ it, stream: p.s.id })));
  all.sort((a, b) => {
    const c = key(a.it) < key(b.it) ? -1 : key(a.it) > key(b.it) ? 1 : uid(a.it) < uid(b.it) ? -1 : 1;
    return o.ascending ? c : -c;
  });
  const taken = all.slice(0, o.limit);

  const next: Positions = { ...positions };
  for (const p of pages) {
    const mine = taken.filter((t) => t.stream === p.s.id).map((t) => t.it);
    const left = p.items.length - mine.length;
    if (mine.length === 0) {
      if (p.items.length === 0 && !p.more) next[p.s.id] = 'done';
      continue;
    }
    if (left === 0 && !p.more) {
      next[p.s.id] = 'done';
      continue;
    }
    const last = sk(mine[mine.length - 1]);
    const carried = p.pos && p.pos.sk === last ? p.pos.seen : [];
    next[p.s.id] = { sk: last, seen: [...carried, ...mine.filter((it) => sk(it) === last).map(uid)] };
  }
  const done = streams.every((s) => next[s.id] === 'done');
  return { items: taken.map((t) => t.it as T), cursor: done ? null : store.cursors.encode({ p: next }, binding) };
}
