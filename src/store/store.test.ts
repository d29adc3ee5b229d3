import { BatchGetCommand, BatchWriteCommand, ScanCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { conflict, GatehouseError } from '../errors.ts';
import { measure, ScanRefusedError, totals } from './accounting.ts';
import { keys } from './keys.ts';
import { Store, tx, type Item } from './store.ts';

let t: TestTable;
let store: Store;
beforeAll(async () => {
  t = await createTestTable();
  store = new Store({ doc: t.doc, tableName: t.tableName, cursorSecret: 'test-secret-0123456789' });
});
afterAll(() => t?.drop());

const thing = (id: string, extra: Item = {}) => ({ ...keys.product(id), Type: 'Product', id, ...extra });

/** A document client whose `send` passes through a hook first: fault injection DynamoDB Local cannot produce. */
function wrap(doc: DynamoDBDocumentClient, hook: (cmd: unknown, real: (c: unknown) => Promise<unknown>) => Promise<unknown>) {
  const real = (c: unknown) => doc.send(c as never);
  return new Proxy(doc, {
    get(target, prop, recv) {
      if (prop === 'send') return (c: unknown) => hook(c, real);
      return Reflect.get(target, prop, recv);
    },
  }) as DynamoDBDocumentClient;
}

describe('items and optimistic versions', () => {
  it('stamps Type, createdAt, updatedAt and version 1 on create, and reads it back strongly consistent', async () => {
    const put = await store.put(thing('p1', { name: 'a' }), { ifNotExists: true });
    expect(put.version).toBe(1);
    const got = await store.get<Item>(keys.product('p1'));
    expect(got).toMatchObject({ PK: 'PRODUCT#p1', SK: 'METADATA', Type: 'Product', name: 'a', version: 1 });
    expect(typeof got?.createdAt).toBe('string');
    expect(got?.updatedAt).toBe(got?.createdAt);
  });

  it('refuses to create an item twice', async () => {
    await store.put(thing('p2'), { ifNotExists: true });
    await expect(store.put(thing('p2'), { ifNotExists: true })).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('bumps the version on update and refuses a stale version with VERSION_CONFLICT', async () => {
    await store.put(thing('p3', { name: 'v1' }), { ifNotExists: true });
    const v2 = await store.update(keys.product('p3'), { set: { name: 'v2' }, expectedVersion: 1 });
    expect(v2).toMatchObject({ name: 'v2', version: 2 });
    const stale = store.update(keys.product('p3'), { set: { name: 'lost' }, expectedVersion: 1 });
    await expect(stale).rejects.toBeInstanceOf(GatehouseError);
    await expect(stale).rejects.toMatchObject({ code: 'VERSION_CONFLICT' });
    expect((await store.get<Item>(keys.product('p3')))?.name).toBe('v2');
  });

  it('reports NOT_FOUND when updating an item that does not exist', async () => {
    await expect(store.update(keys.product('nope'), { set: { name: 'x' } })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await store.get(keys.product('nope'))).toBeUndefined();
  });

  it('increments counters atomically', async () => {
    await store.put(thing('p4', { used: 0 }), { ifNotExists: true });
    await Promise.all(Array.from({ length: 10 }, () => store.update(keys.product('p4'), { add: { used: 1 } })));
    expect((await store.get<Item>(keys.product('p4')))?.used).toBe(10);
  });

  it('refuses an item over 400 KB before sending it', async () => {
    const big = thing('big', { blob: 'x'.repeat(401 * 1024) });
    const { log } = await measure('oversize', () => expect(store.put(big)).rejects.toMatchObject({ code: 'ITEM_TOO_LARGE' }));
    expect(log.count).toBe(0);
    await expect(store.transactWrite([tx.put(big)])).rejects.toMatchObject({ code: 'ITEM_TOO_LARGE' });
    expect(await store.get(keys.product('big'))).toBeUndefined();
  });
});

describe('queries and cursors', () => {
  beforeAll(async () => {
    await store.batchWrite({ puts: Array.from({ length: 25 }, (_, i) => store.stamp({ PK: 'LIST#a', SK: `ITEM#${String(i).padStart(3, '0')}`, Type: 'T', i })) });
    await store.batchWrite({ puts: Array.from({ length: 5 }, (_, i) => store.stamp({ PK: 'LIST#b', SK: `ITEM#${i}`, Type: 'T', i })) });
  });

  it('pages through a partition with opaque cursors and ends with a null cursor', async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { items: Item[]; cursor: string | null } = await store.query<Item>({ pk: 'LIST#a', sk: { beginsWith: 'ITEM#' }, limit: 10, cursor });
      seen.push(...page.items.map((x) => x.i as number));
      cursor = page.cursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(pages).toBe(3);
  });

  it('reads newest first when asked', async () => {
    const page = await store.query<Item>({ pk: 'LIST#a', limit: 3, ascending: false });
    expect(page.items.map((x) => x.i)).toEqual([24, 23, 22]);
  });

  it('rejects an altered cursor', async () => {
    const { cursor } = await store.query({ pk: 'LIST#a', limit: 5 });
    const [payload, sig] = cursor!.split('.');
    const forgedPayload = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), k: { PK: 'LIST#a', SK: 'ITEM#020' } }),
    ).toString('base64url');
    await expect(store.query({ pk: 'LIST#a', limit: 5, cursor: `${forgedPayload}.${sig}` })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    await expect(store.query({ pk: 'LIST#a', limit: 5, cursor: `${payload}.AAAA${sig.slice(4)}` })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    await expect(store.query({ pk: 'LIST#a', limit: 5, cursor: 'garbage' })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
  });

  it('rejects a cursor from another query and one signed by another server', async () => {
    const { cursor } = await store.query({ pk: 'LIST#a', limit: 5 });
    await expect(store.query({ pk: 'LIST#b', limit: 5, cursor })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    await expect(store.query({ pk: 'LIST#a', limit: 5, ascending: false, cursor })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
    const other = new Store({ doc: t.doc, tableName: t.tableName, cursorSecret: 'another-secret-0123456789' });
    await expect(other.query({ pk: 'LIST#a', limit: 5, cursor })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
  });
});

describe('batches', () => {
  it('reads more than 100 keys in one wave of chunked requests, in the order asked, skipping missing ones', async () => {
    const items = Array.from({ length: 150 }, (_, i) => store.stamp({ PK: `B#${i}`, SK: 'METADATA', Type: 'T', i }));
    await store.batchWrite({ puts: items });
    const ask = [...items.map((x) => ({ PK: x.PK, SK: x.SK })), { PK: 'B#missing', SK: 'METADATA' }, { PK: 'B#3', SK: 'METADATA' }].reverse();
    const { result, log } = await measure('batchGet', () => store.batchGet<Item>(ask));
    // First occurrence wins: B#3 (asked first), then 149 down to 0 without 3.
    const descending = Array.from({ length: 150 }, (_, i) => 149 - i);
    expect(result.map((x) => x.i)).toEqual([3, ...descending.filter((i) => i !== 3)]);
    // Two chunks sent together in the first wave (DynamoDB Local may hand back unprocessed keys
    // under load; their retry is a later wave, which is the point of the retry test below).
    expect(log.requests.filter((r) => r.wave === 1 && r.command === 'BatchGetItem')).toHaveLength(2);
  });

  it('retries unprocessed keys with backoff and never drops one', async () => {
    const items = Array.from({ length: 40 }, (_, i) => store.stamp({ PK: `U#${i}`, SK: 'METADATA', Type: 'T', i }));
    await store.batchWrite({ puts: items });
    let calls = 0;
    // DynamoDB Local never returns UnprocessedKeys: hand back all but 7 keys as unprocessed, twice.
    const flaky = wrap(t.doc, async (cmd, real) => {
      if (cmd instanceof BatchGetCommand && calls++ < 2) {
        const req = cmd.input.RequestItems![t.tableName];
        const served = req.Keys!.slice(0, 7);
        const out = (await real(new BatchGetCommand({ RequestItems: { [t.tableName]: { ...req, Keys: served } } }))) as Record<string, any>;
        return { ...out, UnprocessedKeys: { [t.tableName]: { ...req, Keys: req.Keys!.slice(7) } } };
      }
      return real(cmd);
    });
    const s = new Store({ doc: flaky, tableName: t.tableName });
    const got = await s.batchGet<Item>(items.map((x) => ({ PK: x.PK, SK: x.SK })));
    expect(calls).toBe(3);
    expect(got.map((x) => x.i)).toEqual(items.map((x) => x.i));
  });

  it('gives up with BATCH_INCOMPLETE at the deadline instead of returning a partial result', async () => {
    const never = wrap(t.doc, async (cmd, real) => {
      if (cmd instanceof BatchGetCommand) return { Responses: { [t.tableName]: [] }, UnprocessedKeys: cmd.input.RequestItems };
      return real(cmd);
    });
    const s = new Store({ doc: never, tableName: t.tableName, batchDeadlineMs: 150 });
    await expect(s.batchGet([{ PK: 'U#1', SK: 'METADATA' }])).rejects.toMatchObject({ code: 'BATCH_INCOMPLETE', details: { unprocessed: 1 } });
  });

  it('retries unprocessed writes until every item is written', async () => {
    let calls = 0;
    const flaky = wrap(t.doc, async (cmd, real) => {
      if (cmd instanceof BatchWriteCommand && calls++ === 0) {
        const reqs = cmd.input.RequestItems![t.tableName];
        await real(new BatchWriteCommand({ RequestItems: { [t.tableName]: reqs.slice(0, 3) } }));
        return { UnprocessedItems: { [t.tableName]: reqs.slice(3) } };
      }
      return real(cmd);
    });
    const s = new Store({ doc: flaky, tableName: t.tableName });
    const items = Array.from({ length: 10 }, (_, i) => s.stamp({ PK: `W#${i}`, SK: 'METADATA', Type: 'T', i }));
    await s.batchWrite({ puts: items });
    expect(calls).toBe(2);
    expect(await store.batchGet(items.map((x) => ({ PK: x.PK, SK: x.SK })))).toHaveLength(10);
  });
});

describe('transactions', () => {
  const userItem = (id: string, email: string) => ({ ...keys.user(id), Type: 'User', id, email });
  const emailGuard = (email: string, userId: string) => ({ ...keys.email(email), Type: 'EmailGuard', email, userId });
  const guarded = (email: string) => ({ ifNotExists: true, onConditionFailed: () => conflict('email', `${email} is already in use`) });

  it('writes all items or none, and names the field of a uniqueness guard that failed', async () => {
    await store.transactWrite([tx.put(userItem('u1', 'a@x.io'), { ifNotExists: true }), tx.put(emailGuard('a@x.io', 'u1'), guarded('a@x.io'))]);
    const second = store.transactWrite([tx.put(userItem('u2', 'a@x.io'), { ifNotExists: true }), tx.put(emailGuard('a@x.io', 'u2'), guarded('a@x.io'))]);
    await expect(second).rejects.toMatchObject({ code: 'CONFLICT', details: { errors: [{ field: 'email' }] } });
    expect(await store.get(keys.user('u2'))).toBeUndefined();
    expect((await store.get<Item>(keys.email('a@x.io')))?.userId).toBe('u1');
  });

  it('maps a version check inside a transaction to VERSION_CONFLICT', async () => {
    await store.put(thing('tv'), { ifNotExists: true });
    await expect(store.transactWrite([tx.update(keys.product('tv'), { set: { a: 1 }, expectedVersion: 7 }), tx.put(thing('tv2'))])).rejects.toMatchObject({
      code: 'VERSION_CONFLICT',
    });
    expect(await store.get(keys.product('tv2'))).toBeUndefined();
  });

  it('refuses 101 actions and two actions on one item before sending anything', async () => {
    const many = Array.from({ length: 101 }, (_, i) => tx.put(thing(`m${i}`)));
    const { log } = await measure('too many', async () => {
      await expect(store.transactWrite(many)).rejects.toMatchObject({ code: 'TRANSACTION_TOO_LARGE' });
      await expect(store.transactWrite([tx.put(thing('d1')), tx.delete(keys.product('d1'))])).rejects.toThrow(/same item/);
    });
    expect(log.count).toBe(0);
    expect(await store.get(keys.product('m0'))).toBeUndefined();
  });

  it('writes 100 actions in one transaction', async () => {
    await store.transactWrite(Array.from({ length: 100 }, (_, i) => tx.put(thing(`h${i}`))));
    expect(await store.batchGet(Array.from({ length: 100 }, (_, i) => keys.product(`h${i}`)))).toHaveLength(100);
  });

  it('retries a transaction cancelled by a transaction conflict, then succeeds', async () => {
    let calls = 0;
    const conflicting = wrap(t.doc, async (cmd, real) => {
      if (cmd instanceof TransactWriteCommand && calls++ < 2) {
        throw Object.assign(new Error('Transaction cancelled'), { name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'TransactionConflict' }] });
      }
      return real(cmd);
    });
    const s = new Store({ doc: conflicting, tableName: t.tableName });
    await s.transactWrite([tx.put(thing('rc'))]);
    expect(calls).toBe(3);
    expect(await store.get(keys.product('rc'))).toBeDefined();
  });

  it('reports RETRYABLE when throttling outlasts the retries', async () => {
    const throttled = wrap(t.doc, async (cmd, real) => {
      if (cmd instanceof TransactWriteCommand) {
        throw Object.assign(new Error('Transaction cancelled'), { name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'None' }, { Code: 'ThrottlingError' }] });
      }
      return real(cmd);
    });
    const s = new Store({ doc: throttled, tableName: t.tableName, transactAttempts: 3 });
    await expect(s.transactWrite([tx.put(thing('rt1')), tx.put(thing('rt2'))])).rejects.toMatchObject({ code: 'RETRYABLE', status: 503 });
  });
});

describe('request accounting', () => {
  it('counts parallel requests as one wave and dependent ones as the next', async () => {
    await store.put(thing('acc'), { ifNotExists: true });
    const { log } = await measure('waves', async () => {
      await Promise.all([store.get(keys.product('acc')), store.get(keys.product('acc')), store.query({ pk: 'LIST#b' })]);
      await store.get(keys.product('acc'));
    });
    expect(log.waves).toBe(2);
    expect(log.byCommand()).toEqual({ GetItem: 3, Query: 1 });
    expect(log.capacity).toBeGreaterThan(0);
  });

  it('names the index of an index query', async () => {
    const { log } = await measure('gsi', () => store.query({ index: 'GSI1', pk: 'ENTITY#PRODUCT' }));
    expect(log.byCommand()).toEqual({ 'Query:GSI1': 1 });
  });

  it('refuses to send a Scan', async () => {
    await expect(t.doc.send(new ScanCommand({ TableName: t.tableName }))).rejects.toBeInstanceOf(ScanRefusedError);
    totals.scans--; // this one was attempted on purpose; the suite-wide guard counts every other attempt
    expect(Object.keys(Store.prototype).concat(Object.getOwnPropertyNames(Store.prototype)).some((m) => /scan/i.test(m))).toBe(false);
  });
});
