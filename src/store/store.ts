/**
 * The data layer: the one place that talks to DynamoDB. A thin layer over lib-dynamodb that adds
 * what every repository needs and what is easy to get wrong by hand:
 *  - item stamping (`Type`, `createdAt`, `updatedAt`, `version`) and optimistic versions;
 *  - conditional writes whose failures become typed errors naming the item or field;
 *  - signed, query-bound cursors;
 *  - batch chunking with retried unprocessed keys (never a silently dropped key);
 *  - transactions checked before sending (≤ 100 actions, one action per item, ≤ 400 KB items)
 *    with cancellation reasons mapped to typed errors and transient conflicts retried.
 * There is deliberately no scan method.
 */
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import { GatehouseError, versionConflict } from '../errors.ts';
import { CursorCodec } from './cursor.ts';
import type { Key } from './keys.ts';
import type { IndexName } from './table.ts';

export type Item = Record<string, unknown>;

/** Attributes every stored item carries (principle 4). */
export type Stamped = {
  PK: string;
  SK: string;
  Type: string;
  createdAt: string;
  updatedAt: string;
  version: number;
};

export interface Condition {
  expression: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
}

/** What to report when an action's condition fails. */
export type OnConditionFailed = () => GatehouseError;

export interface WriteOptions {
  /** The write must create the item (uniqueness guards, creates). */
  ifNotExists?: boolean;
  /** The item must exist and still be at this version (optimistic locking). */
  expectedVersion?: number;
  /** The item must exist. */
  mustExist?: boolean;
  /** An extra condition, ANDed with the above. */
  condition?: Condition;
  /** The typed error to raise if the condition fails; defaults are derived from the options. */
  onConditionFailed?: OnConditionFailed;
  /** A readable name of the item for default error messages (e.g. `tenant 01H…`). */
  what?: string;
}

export interface UpdateSpec extends WriteOptions {
  set?: Record<string, unknown>;
  remove?: string[];
  /** Atomic numeric increments (negative to decrement). */
  add?: Record<string, number>;
}

export type SortCondition =
  | { eq: string }
  | { beginsWith: string }
  | { between: [string, string] }
  | { gt: string }
  | { gte: string }
  | { lt: string }
  | { lte: string };

export interface QuerySpec {
  index?: IndexName;
  pk: string;
  sk?: SortCondition;
  limit?: number;
  cursor?: string | null;
  /** Newest / highest first when false. */
  ascending?: boolean;
  /** Base-table queries are strongly consistent unless this is false; index queries never are. */
  consistent?: boolean;
  filter?: Condition;
}

export interface Page<T> {
  items: T[];
  cursor: string | null;
}

export type TxAction =
  | { kind: 'put'; item: Item; opts: WriteOptions }
  | { kind: 'update'; key: Key; spec: UpdateSpec }
  | { kind: 'delete'; key: Key; opts: WriteOptions }
  | { kind: 'check'; key: Key; opts: WriteOptions };

/** Builders for transaction actions, so services compose one atomic write from several parts. */
export const tx = {
  put: (item: Item, opts: WriteOptions = {}): TxAction => ({ kind: 'put', item, opts }),
  update: (key: Key, spec: UpdateSpec): TxAction => ({ kind: 'update', key, spec }),
  delete: (key: Key, opts: WriteOptions = {}): TxAction => ({ kind: 'delete', key, opts }),
  check: (key: Key, opts: WriteOptions): TxAction => ({ kind: 'check', key, opts }),
};

export const LIMITS = {
  transactActions: 100,
  transactBytes: 4 * 1024 * 1024,
  itemBytes: 400 * 1024,
  batchGetKeys: 100,
  batchWriteItems: 25,
} as const;

export interface StoreOptions {
  doc: DynamoDBDocumentClient;
  tableName: string;
  /** Signs cursors. Random per process if not given. */
  cursorSecret?: string | Buffer;
  now?: () => Date;
  /** How long batch operations keep retrying unprocessed keys before giving up. */
  batchDeadlineMs?: number;
  /** Attempts for a transaction cancelled by a transient conflict or throttling. */
  transactAttempts?: number;
}

// ---- helpers -------------------------------------------------------------------------------------

const keyOf = (item: Item): Key => ({ PK: String(item.PK), SK: String(item.SK) });
const keyId = (k: Key) => `${k.PK}\u0000${k.SK}`;
const describeKey = (k: Key) => `${k.PK} / ${k.SK}`;

/** DynamoDB's item size: attribute names plus values, per the documented sizing rules. */
export function itemSize(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number' || typeof value === 'bigint') return Math.ceil(String(value).replace(/^-|\.|e.*$/g, '').length / 2) + 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...value].reduce((s: number, v) => s + itemSize(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce((s: number, v) => s + 1 + itemSize(v), 0);
  if (typeof value === 'object') {
    return 3 + Object.entries(value).reduce((s, [k, v]) => (v === undefined ? s : s + Buffer.byteLength(k, 'utf8') + 1 + itemSize(v)), 0);
  }
  return 0;
}

function assertItemSize(item: Item) {
  // The top-level map overhead does not count for an item, only names and values.
  const size = itemSize(item) - 3;
  if (size > LIMITS.itemBytes) {
    throw new GatehouseError('ITEM_TOO_LARGE', `The item ${describeKey(keyOf(item))} would be ${size} bytes; DynamoDB's limit is 400 KB`, {
      bytes: size,
      limit: LIMITS.itemBytes,
    });
  }
  return size;
}

/** Accumulates expression placeholders without collisions. */
class Expr {
  names: Record<string, string> = {};
  values: Record<string, unknown> = {};
  private n = 0;
  name(attr: string) {
    const p = `#n${this.n++}`;
    this.names[p] = attr;
    return p;
  }
  value(v: unknown) {
    const p = `:v${this.n++}`;
    this.values[p] = v;
    return p;
  }
  /** Merge a caller's condition, renaming its placeholders so they cannot clash with ours. */
  merge(c: Condition): string {
    let expr = c.expression;
    const tag = `x${this.n++}_`;
    for (const [p, v] of Object.entries(c.names ?? {})) {
      const np = `#${tag}${p.slice(1)}`;
      this.names[np] = v;
      expr = expr.replace(new RegExp(`${p}\\b`, 'g'), np);
    }
    for (const [p, v] of Object.entries(c.values ?? {})) {
      const np = `:${tag}${p.slice(1)}`;
      this.values[np] = v;
      expr = expr.replace(new RegExp(`${p}\\b`, 'g'), np);
    }
    return `(${expr})`;
  }
  params() {
    return {
      ...(Object.keys(this.names).length ? { ExpressionAttributeNames: this.names } : {}),
      ...(Object.keys(this.values).length ? { ExpressionAttributeValues: this.values } : {}),
    };
  }
}

function conditionFor(e: Expr, o: WriteOptions): string | undefined {
  const parts: string[] = [];
  if (o.ifNotExists) parts.push(`attribute_not_exists(${e.name('PK')})`);
  if (o.mustExist || o.expectedVersion !== undefined) parts.push(`attribute_exists(${e.name('PK')})`);
  if (o.expectedVersion !== undefined) parts.push(`${e.name('version')} = ${e.value(o.expectedVersion)}`);
  if (o.condition) parts.push(e.merge(o.condition));
  return parts.length ? parts.join(' AND ') : undefined;
}

function defaultConditionError(key: Key, o: WriteOptions): GatehouseError {
  const what = o.what ?? describeKey(key);
  if (o.expectedVersion !== undefined) return versionConflict(what, o.expectedVersion);
  if (o.ifNotExists) return new GatehouseError('CONFLICT', `${what} already exists`, { key: describeKey(key) });
  if (o.mustExist) return new GatehouseError('NOT_FOUND', `${what} not found`);
  return new GatehouseError('CONFLICT', `The condition on ${what} no longer holds; re-read and retry`, { key: describeKey(key) });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Exponential backoff with full jitter. */
const backoff = (attempt: number, base = 20, cap = 1000) => Math.random() * Math.min(cap, base * 2 ** attempt);

const RETRYABLE_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TransactionConflictException',
  'InternalServerError',
  'ServiceUnavailable',
]);

function sdkErrorName(e: unknown): string {
  return (e as { name?: string })?.name ?? '';
}

// ---- the store ------------------------------------------------------------------------------------

export class Store {
  readonly doc: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly cursors: CursorCodec;
  readonly now: () => Date;
  private readonly batchDeadlineMs: number;
  private readonly transactAttempts: number;

  constructor(o: StoreOptions) {
    this.doc = o.doc;
    this.tableName = o.tableName;
    this.cursors = new CursorCodec(o.cursorSecret ?? randomBytes(32));
    this.now = o.now ?? (() => new Date());
    this.batchDeadlineMs = o.batchDeadlineMs ?? 10_000;
    this.transactAttempts = o.transactAttempts ?? 5;
  }

  /** Adds the stamp attributes to a new item. */
  stamp<T extends Item>(item: T, version = 1): T & Stamped {
    const now = this.now().toISOString();
    return { createdAt: now, ...item, updatedAt: now, version } as T & Stamped;
  }

  // ---- single-item operations ----

  async get<T = Item>(key: Key, opts: { consistent?: boolean } = {}): Promise<T | undefined> {
    const out = await this.run(() => this.doc.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: opts.consistent ?? true })));
    return out.Item as T | undefined;
  }

  /**
   * Writes a whole item, stamped. With `expectedVersion` it replaces that version and bumps it;
   * otherwise it is a create at version 1 (use `ifNotExists` to refuse overwriting).
   */
  async put<T extends Item>(item: T, opts: WriteOptions = {}): Promise<T & Stamped> {
    const stamped = this.stampForPut(item, opts);
    assertItemSize(stamped);
    const e = new Expr();
    const cond = conditionFor(e, opts);
    await this.run(() => this.doc.send(new PutCommand({ TableName: this.tableName, Item: stamped, ...(cond ? { ConditionExpression: cond, ...e.params() } : {}) })),
      () => (opts.onConditionFailed ?? (() => defaultConditionError(keyOf(stamped), opts)))(),
    );
    return stamped;
  }

  /** Updates attributes, bumps `version` and `updatedAt`; returns the new item. */
  async update<T = Item>(key: Key, spec: UpdateSpec): Promise<T & Stamped> {
    const params = this.updateParams(key, { mustExist: true, ...spec });
    const out = await this.run(() => this.doc.send(new UpdateCommand({ ...params, ReturnValues: 'ALL_NEW' })), () =>
      (spec.onConditionFailed ?? (() => defaultConditionError(key, { mustExist: true, ...spec })))(),
    );
    return out.Attributes as T & Stamped;
  }

  /** Deletes an item; returns what was there (undefined if nothing was). */
  async delete<T = Item>(key: Key, opts: WriteOptions = {}): Promise<T | undefined> {
    const e = new Expr();
    const cond = conditionFor(e, opts);
    const out = await this.run(() => this.doc.send(new DeleteCommand({ TableName: this.tableName, Key: key, ReturnValues: 'ALL_OLD', ...(cond ? { ConditionExpression: cond, ...e.params() } : {}) })),
      () => (opts.onConditionFailed ?? (() => defaultConditionError(key, opts)))(),
    );
    return out.Attributes as T | undefined;
  }

  // ---- queries ----

  private queryInput(q: QuerySpec) {
    const e = new Expr();
    const pkName = q.index ? `${q.index}PK` : 'PK';
    const skName = q.index ? `${q.index}SK` : 'SK';
    let kce = `${e.name(pkName)} = ${e.value(q.pk)}`;
    const s = q.sk;
    if (s) {
      const n = e.name(skName);
      if ('eq' in s) kce += ` AND ${n} = ${e.value(s.eq)}`;
      else if ('beginsWith' in s) kce += ` AND begins_with(${n}, ${e.value(s.beginsWith)})`;
      else if ('between' in s) kce += ` AND ${n} BETWEEN ${e.value(s.between[0])} AND ${e.value(s.between[1])}`;
      else if ('gt' in s) kce += ` AND ${n} > ${e.value(s.gt)}`;
      else if ('gte' in s) kce += ` AND ${n} >= ${e.value(s.gte)}`;
      else if ('lt' in s) kce += ` AND ${n} < ${e.value(s.lt)}`;
      else if ('lte' in s) kce += ` AND ${n} <= ${e.value(s.lte)}`;
    }
    const filter = q.filter ? e.merge(q.filter) : undefined;
    return {
      TableName: this.tableName,
      ...(q.index ? { IndexName: q.index } : { ConsistentRead: q.consistent ?? true }),
      KeyConditionExpression: kce,
      ...(filter ? { FilterExpression: filter } : {}),
      ScanIndexForward: q.ascending ?? true,
      ...e.params(),
    };
  }

  /** One page of a query, with an opaque cursor bound to this query (null at the end). */
  async query<T = Item>(q: QuerySpec): Promise<Page<T>> {
    const binding = CursorCodec.binding({ i: q.index ?? '', pk: q.pk, sk: q.sk ?? null, a: q.ascending ?? true, f: q.filter ?? null });
    const start = q.cursor ? this.cursors.decode(q.cursor, binding) : undefined;
    const limit = q.limit ?? 100;
    const items: Item[] = [];
    let lastKey: Record<string, unknown> | undefined = start;
    // A filter may leave a page short or empty with more to come: keep reading until the page is
    // full or the partition is done (field notes: always follow LastEvaluatedKey).
    do {
      const out = await this.run(() => this.doc.send(new QueryCommand({ ...this.queryInput(q), Limit: limit - items.length, ...(lastKey ? { ExclusiveStartKey: lastKey } : {}) })),
      );
      items.push(...((out.Items ?? []) as Item[]));
      lastKey = out.LastEvaluatedKey;
    } while (lastKey && items.length < limit);
    return { items: items as T[], cursor: lastKey ? this.cursors.encode(lastKey, binding) : null };
  }

  /** Every item of a query (internal use; bounded so a runaway partition cannot exhaust memory). */
  async queryAll<T = Item>(q: Omit<QuerySpec, 'cursor' | 'limit'>, max = 10_000): Promise<T[]> {
    const out: T[] = [];
    let lastKey: Record<string, unknown> | undefined;
    do {
      const page = await this.run(() => this.doc.send(new QueryCommand({ ...this.queryInput(q), ...(lastKey ? { ExclusiveStartKey: lastKey } : {}) })));
      out.push(...((page.Items ?? []) as T[]));
      lastKey = page.LastEvaluatedKey;
      if (out.length > max) throw new GatehouseError('INTERNAL', `A query returned more than ${max} items; page through it instead`);
    } while (lastKey);
    return out;
  }

  // ---- batches ----

  /**
   * Reads many items (any number): chunks of 100 sent in parallel (one wave), unprocessed keys
   * retried with backoff until the deadline, then BATCH_INCOMPLETE. Returns the items found, in
   * the order of `keys`; missing items are absent. Duplicate keys are read once.
   */
  async batchGet<T = Item>(keys: Key[], opts: { consistent?: boolean } = {}): Promise<T[]> {
    const unique = new Map(keys.map((k) => [keyId(k), { PK: k.PK, SK: k.SK }]));
    const found = new Map<string, Item>();
    const chunks: Key[][] = [];
    const all = [...unique.values()];
    for (let i = 0; i < all.length; i += LIMITS.batchGetKeys) chunks.push(all.slice(i, i + LIMITS.batchGetKeys));
    const deadline = Date.now() + this.batchDeadlineMs;
    await Promise.all(
      chunks.map(async (chunk) => {
        let pending: Key[] = chunk;
        for (let attempt = 0; pending.length; attempt++) {
          if (attempt > 0) {
            if (Date.now() > deadline) {
              throw new GatehouseError('BATCH_INCOMPLETE', `DynamoDB left ${pending.length} keys unread after ${attempt} attempts; retry later`, {
                unprocessed: pending.length,
              });
            }
            await sleep(backoff(attempt));
          }
          const out = await this.run(() => this.doc.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: pending, ConsistentRead: opts.consistent ?? true } } })),
          );
          for (const it of out.Responses?.[this.tableName] ?? []) found.set(keyId(keyOf(it)), it);
          pending = (out.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Key[];
        }
      }),
    );
    const result: T[] = [];
    for (const id of unique.keys()) {
      const it = found.get(id);
      if (it) result.push(it as T);
    }
    return result;
  }

  /** Writes many unconditional puts/deletes (not atomic): chunks of 25, unprocessed items retried. */
  async batchWrite(ops: { puts?: Item[]; deletes?: Key[] }): Promise<void> {
    const requests: Record<string, unknown>[] = [
      ...(ops.puts ?? []).map((item) => {
        assertItemSize(item);
        return { PutRequest: { Item: item } };
      }),
      ...(ops.deletes ?? []).map((k) => ({ DeleteRequest: { Key: { PK: k.PK, SK: k.SK } } })),
    ];
    const deadline = Date.now() + this.batchDeadlineMs;
    const chunks: Record<string, unknown>[][] = [];
    for (let i = 0; i < requests.length; i += LIMITS.batchWriteItems) chunks.push(requests.slice(i, i + LIMITS.batchWriteItems));
    await Promise.all(
      chunks.map(async (chunk) => {
        let pending = chunk;
        for (let attempt = 0; pending.length; attempt++) {
          if (attempt > 0) {
            if (Date.now() > deadline) {
              throw new GatehouseError('BATCH_INCOMPLETE', `DynamoDB left ${pending.length} writes unprocessed after ${attempt} attempts; retry later`, {
                unprocessed: pending.length,
              });
            }
            await sleep(backoff(attempt));
          }
          const out = await this.run(() => this.doc.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: pending as never } })));
          pending = (out.UnprocessedItems?.[this.tableName] ?? []) as Record<string, unknown>[];
        }
      }),
    );
  }

  // ---- transactions ----

  /** The item a put action will write (stamped), for callers that return it. */
  stampForPut<T extends Item>(item: T, opts: WriteOptions = {}): T & Stamped {
    return this.stamp(item, opts.expectedVersion !== undefined ? opts.expectedVersion + 1 : ((item.version as number | undefined) ?? 1));
  }

  private updateParams(key: Key, spec: UpdateSpec) {
    const e = new Expr();
    const sets: string[] = [];
    for (const [attr, v] of Object.entries(spec.set ?? {})) {
      if (v === undefined) continue;
      sets.push(`${e.name(attr)} = ${e.value(v)}`);
    }
    for (const [attr, n] of Object.entries(spec.add ?? {})) {
      const a = e.name(attr);
      sets.push(`${a} = if_not_exists(${a}, ${e.value(0)}) + ${e.value(n)}`);
    }
    const now = this.now().toISOString();
    sets.push(`${e.name('updatedAt')} = ${e.value(now)}`);
    const ver = e.name('version');
    sets.push(`${ver} = if_not_exists(${ver}, ${e.value(0)}) + ${e.value(1)}`);
    sets.push(`${e.name('createdAt')} = if_not_exists(${e.name('createdAt')}, ${e.value(now)})`);
    const removes = (spec.remove ?? []).map((a) => e.name(a));
    const cond = conditionFor(e, spec);
    return {
      TableName: this.tableName,
      Key: { PK: key.PK, SK: key.SK },
      UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
      ...(cond ? { ConditionExpression: cond } : {}),
      ...e.params(),
    };
  }

  private toTransactItem(a: TxAction) {
    if (a.kind === 'put') {
      const item = this.stampForPut(a.item, a.opts);
      const size = assertItemSize(item);
      const e = new Expr();
      const cond = conditionFor(e, a.opts);
      return { key: keyOf(item), size, raw: { Put: { TableName: this.tableName, Item: item, ...(cond ? { ConditionExpression: cond, ...e.params() } : {}) } } };
    }
    if (a.kind === 'update') {
      return { key: a.key, size: 0, raw: { Update: this.updateParams(a.key, a.spec) } };
    }
    const e = new Expr();
    const cond = conditionFor(e, a.opts);
    if (a.kind === 'delete') {
      return { key: a.key, size: 0, raw: { Delete: { TableName: this.tableName, Key: { PK: a.key.PK, SK: a.key.SK }, ...(cond ? { ConditionExpression: cond, ...e.params() } : {}) } } };
    }
    if (!cond) throw new GatehouseError('INTERNAL', 'A condition check needs a condition');
    return { key: a.key, size: 0, raw: { ConditionCheck: { TableName: this.tableName, Key: { PK: a.key.PK, SK: a.key.SK }, ConditionExpression: cond, ...e.params() } } };
  }

  private conditionErrorOf(a: TxAction): GatehouseError {
    const opts = a.kind === 'update' ? { mustExist: true, ...a.spec } : a.opts;
    const key = a.kind === 'put' ? keyOf(a.item) : a.key;
    return opts.onConditionFailed ? opts.onConditionFailed() : defaultConditionError(key, opts);
  }

  /**
   * Writes all actions atomically. Refuses before sending: more than 100 actions, two actions on
   * one item, an item over 400 KB, more than 4 MB in all. A failed condition becomes the typed
   * error of the first action whose condition failed; transient cancellations (conflict with
   * another transaction, throttling) are retried with backoff, then RETRYABLE.
   */
  async transactWrite(actions: TxAction[], opts: { clientRequestToken?: string } = {}): Promise<void> {
    if (actions.length === 0) return;
    if (actions.length > LIMITS.transactActions) {
      throw new GatehouseError('TRANSACTION_TOO_LARGE', `A transaction holds at most ${LIMITS.transactActions} actions; this one has ${actions.length}`, {
        actions: actions.length,
        limit: LIMITS.transactActions,
      });
    }
    const built = actions.map((a) => this.toTransactItem(a));
    const seen = new Set<string>();
    for (const b of built) {
      const id = keyId(b.key);
      if (seen.has(id)) throw new GatehouseError('INTERNAL', `Two actions of one transaction touch the same item ${describeKey(b.key)}`);
      seen.add(id);
    }
    const total = built.reduce((s, b) => s + b.size, 0);
    if (total > LIMITS.transactBytes) {
      throw new GatehouseError('TRANSACTION_TOO_LARGE', `A transaction holds at most 4 MB; this one has ${total} bytes`, { bytes: total });
    }
    const input: TransactWriteCommandInput = {
      TransactItems: built.map((b) => b.raw) as TransactWriteCommandInput['TransactItems'],
      ...(opts.clientRequestToken ? { ClientRequestToken: opts.clientRequestToken } : {}),
    };
    for (let attempt = 0; ; attempt++) {
      try {
        await this.doc.send(new TransactWriteCommand(input));
        return;
      } catch (err) {
        const reasons = (err as { CancellationReasons?: { Code?: string; Message?: string }[] }).CancellationReasons;
        if (sdkErrorName(err) === 'TransactionCanceledException' && reasons) {
          const failed = reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed');
          if (failed >= 0) throw this.conditionErrorOf(actions[failed]);
          const invalid = reasons.findIndex((r) => r.Code === 'ValidationError');
          if (invalid >= 0) {
            const msg = reasons[invalid].Message ?? '';
            if (/size/i.test(msg)) throw new GatehouseError('ITEM_TOO_LARGE', `The item ${describeKey(built[invalid].key)} is too large: ${msg}`);
            throw new GatehouseError('INTERNAL', `DynamoDB refused ${describeKey(built[invalid].key)}: ${msg}`);
          }
          const transient = reasons.some((r) => r.Code === 'TransactionConflict' || r.Code === 'ThrottlingError' || r.Code === 'ProvisionedThroughputExceeded');
          if (!transient) throw new GatehouseError('INTERNAL', `The transaction was cancelled: ${reasons.map((r) => r.Code).join(', ')}`, {}, { cause: err });
        } else if (!RETRYABLE_NAMES.has(sdkErrorName(err))) {
          throw this.mapError(err);
        }
        if (attempt + 1 >= this.transactAttempts) {
          throw new GatehouseError('RETRYABLE', 'The write conflicted with concurrent writes or was throttled; retry it', { attempts: attempt + 1 }, { cause: err });
        }
        await sleep(backoff(attempt, 25, 500));
      }
    }
  }

  // ---- plumbing ----

  /** Runs one SDK call, mapping its failures to typed errors. */
  private async run<T>(call: () => Promise<T>, onConditionFailed?: () => GatehouseError): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (sdkErrorName(err) === 'ConditionalCheckFailedException' && onConditionFailed) throw onConditionFailed();
      throw this.mapError(err);
    }
  }

  private mapError(err: unknown): Error {
    if (err instanceof GatehouseError) return err;
    const name = sdkErrorName(err);
    if (RETRYABLE_NAMES.has(name)) return new GatehouseError('RETRYABLE', 'DynamoDB is busy; retry the request', { reason: name }, { cause: err });
    const message = (err as Error)?.message ?? String(err);
    if (name === 'ValidationException' && /item size|size has exceeded/i.test(message)) {
      return new GatehouseError('ITEM_TOO_LARGE', `The item is too large: ${message}`, {}, { cause: err });
    }
    return err as Error;
  }
}
