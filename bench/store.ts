/**
 * Data-layer overhead: each store operation beside the raw SDK doing the same work in the same
 * run, interleaved. Figures: store.{get,query,batchGet100,transact4}.p50_ms, raw.*.p50_ms and
 * store.*.overhead_ratio (ours / raw; goal ≤ 1.10).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { Store } from '../src/store/store.ts';
import { tx } from '../src/store/store.ts';
import { percentile, round, timePair } from './stats.ts';

export async function benchStore(o: { store: Store; endpoint: string; n?: number }): Promise<Record<string, number>> {
  const { store } = o;
  const n = o.n ?? 300;
  const table = store.tableName;
  // The raw SDK without our middleware, on its own client.
  const rawClient = new DynamoDBClient({ endpoint: o.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const raw = DynamoDBDocumentClient.from(rawClient, { marshallOptions: { removeUndefinedValues: true } });

  const items = Array.from({ length: 100 }, (_, i) => store.stamp({ PK: 'BENCH#store', SK: `ITEM#${String(i).padStart(3, '0')}`, Type: 'Bench', i, payload: 'x'.repeat(200) }));
  const singles = Array.from({ length: 100 }, (_, i) => store.stamp({ PK: `BENCH#one#${i}`, SK: 'METADATA', Type: 'Bench', i, payload: 'x'.repeat(200) }));
  await store.batchWrite({ puts: [...items, ...singles] });
  const keyOf = (i: number) => ({ PK: `BENCH#one#${i % 100}`, SK: 'METADATA' });

  const out: Record<string, number> = {};
  const record = (name: string, ours: number[], theirs: number[]) => {
    out[`store.${name}.p50_ms`] = round(percentile(ours, 50));
    out[`raw.${name}.p50_ms`] = round(percentile(theirs, 50));
    out[`store.${name}.overhead_ratio`] = round(percentile(ours, 50) / percentile(theirs, 50));
  };

  const [g1, g2] = await timePair(
    n,
    (i) => store.get(keyOf(i)),
    (i) => raw.send(new GetCommand({ TableName: table, Key: keyOf(i), ConsistentRead: true })),
  );
  record('get', g1, g2);

  const [q1, q2] = await timePair(
    n,
    () => store.query({ pk: 'BENCH#store', sk: { beginsWith: 'ITEM#' }, limit: 25 }),
    () =>
      raw.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :sk)',
          ExpressionAttributeNames: { '#pk': 'PK', '#sk': 'SK' },
          ExpressionAttributeValues: { ':pk': 'BENCH#store', ':sk': 'ITEM#' },
          ConsistentRead: true,
          Limit: 25,
        }),
      ),
  );
  record('query', q1, q2);

  const batchKeys = singles.map((s) => ({ PK: s.PK, SK: s.SK }));
  const [b1, b2] = await timePair(
    Math.ceil(n / 3),
    () => store.batchGet(batchKeys),
    () => raw.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: batchKeys, ConsistentRead: true } } })),
  );
  record('batchGet100', b1, b2);

  const now = () => new Date().toISOString();
  const [t1, t2] = await timePair(
    Math.ceil(n / 3),
    (i) => store.transactWrite(Array.from({ length: 4 }, (_, j) => tx.put({ PK: `BENCH#tx#${i}#${j}`, SK: 'A', Type: 'Bench', i }))),
    (i) =>
      raw.send(
        new TransactWriteCommand({
          TransactItems: Array.from({ length: 4 }, (_, j) => ({
            Put: { TableName: table, Item: { PK: `BENCH#tx#${i}#${j}`, SK: 'B', Type: 'Bench', i, createdAt: now(), updatedAt: now(), version: 1 } },
          })),
        }),
      ),
  );
  record('transact4', t1, t2);
  rawClient.destroy();
  return out;
}
