/**
 * Table administration: create (idempotently), describe, delete the one Gatehouse table.
 * Used by `npm start` (embedded engine), the CLI and the test harness. Control-plane calls only —
 * no data reads here (and never a Scan: the item count comes from DescribeTable).
 */
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  ResourceInUseException,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
  type KeySchemaElement,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { GatehouseError } from '../errors.ts';
import { TABLE, createTableInput } from './table.ts';

export interface TableSummary {
  tableName: string;
  status: string;
  arn?: string;
  /** Approximate: DynamoDB refreshes it about every six hours (DynamoDB Local: live). */
  itemCount: number;
  sizeBytes: number;
  billingMode: string;
  keySchema: { partitionKey?: string; sortKey?: string };
  indexes: { name: string; partitionKey?: string; sortKey?: string; projection?: string; status?: string; itemCount?: number }[];
  ttl: { attribute?: string; status: string };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const keysOf = (schema: KeySchemaElement[] = []) => ({
  partitionKey: schema.find((k) => k.KeyType === 'HASH')?.AttributeName,
  sortKey: schema.find((k) => k.KeyType === 'RANGE')?.AttributeName,
});

async function describeRaw(raw: DynamoDBClient, tableName: string): Promise<TableDescription | undefined> {
  try {
    return (await raw.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (e) {
    if (e instanceof ResourceNotFoundException) return undefined;
    throw e;
  }
}

/** Polls until the table and all its indexes are ACTIVE (immediate on DynamoDB Local, seconds on AWS). */
async function waitActive(raw: DynamoDBClient, tableName: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const t = await describeRaw(raw, tableName);
    const gsisActive = (t?.GlobalSecondaryIndexes ?? []).every((g) => g.IndexStatus === 'ACTIVE');
    if (t?.TableStatus === 'ACTIVE' && gsisActive) return t;
    if (Date.now() > deadline) {
      throw new GatehouseError('RETRYABLE', `table ${tableName} is still ${t?.TableStatus ?? 'missing'} after ${timeoutMs / 1000} s`);
    }
    await sleep(1_000);
  }
}

/**
 * An existing table with another key layout would fail later in confusing ways (e.g. a Query on a
 * missing GSI), so say it now.
 */
function checkLayout(t: TableDescription) {
  const want = createTableInput(t.TableName ?? '');
  const problems: string[] = [];
  const have = keysOf(t.KeySchema);
  if (have.partitionKey !== TABLE.partitionKey || have.sortKey !== TABLE.sortKey) {
    problems.push(`key schema is ${have.partitionKey}/${have.sortKey}, expected ${TABLE.partitionKey}/${TABLE.sortKey}`);
  }
  for (const g of want.GlobalSecondaryIndexes ?? []) {
    const found = t.GlobalSecondaryIndexes?.find((x) => x.IndexName === g.IndexName);
    const wantKeys = keysOf(g.KeySchema);
    const haveKeys = keysOf(found?.KeySchema);
    if (!found) problems.push(`index ${g.IndexName} is missing`);
    else if (haveKeys.partitionKey !== wantKeys.partitionKey || haveKeys.sortKey !== wantKeys.sortKey) {
      problems.push(`index ${g.IndexName} has keys ${haveKeys.partitionKey}/${haveKeys.sortKey}, expected ${wantKeys.partitionKey}/${wantKeys.sortKey}`);
    } else if (found.Projection?.ProjectionType !== 'ALL') {
      problems.push(`index ${g.IndexName} projects ${found.Projection?.ProjectionType}, expected ALL`);
    }
  }
  if (problems.length) {
    throw new GatehouseError(
      'CONFIG',
      `table ${t.TableName} exists but is not a Gatehouse table: ${problems.join('; ')}. ` +
        'Use another table name, or delete this table if its data is disposable.',
      { problems },
    );
  }
}

/** Enables TTL on `expiresAt` unless it already is (re-enabling is an error on AWS and DynamoDB Local). */
async function ensureTtl(raw: DynamoDBClient, tableName: string) {
  const d = (await raw.send(new DescribeTimeToLiveCommand({ TableName: tableName }))).TimeToLiveDescription;
  const status = d?.TimeToLiveStatus;
  if (status === 'ENABLED' || status === 'ENABLING') {
    if (d?.AttributeName === TABLE.ttlAttribute) return;
    throw new GatehouseError(
      'CONFIG',
      `table ${tableName} has TTL on ${d?.AttributeName}, Gatehouse needs it on ${TABLE.ttlAttribute}; ` +
        'disable TTL on the table (it can be changed once per hour on AWS) and run `gatehouse table create` again',
    );
  }
  try {
    await raw.send(
      new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true } }),
    );
  } catch (e) {
    // A concurrent ensureTable may have enabled it in between: "TimeToLive is already enabled".
    if (!/already enabled/i.test((e as Error).message ?? '')) throw e;
  }
}

/**
 * Creates the table if absent (from the one table definition), waits until it is ACTIVE and enables
 * TTL on `expiresAt`. Idempotent and safe to race: a concurrent creator just makes this return
 * `created: false`. An existing table with a different layout is refused with a CONFIG error.
 */
export async function ensureTable(raw: DynamoDBClient, tableName: string, opts: { timeoutMs?: number } = {}): Promise<{ created: boolean }> {
  let created = false;
  const existing = await describeRaw(raw, tableName);
  if (!existing) {
    try {
      await raw.send(new CreateTableCommand(createTableInput(tableName)));
      created = true;
    } catch (e) {
      if (!(e instanceof ResourceInUseException)) throw e;
    }
  }
  const table = await waitActive(raw, tableName, opts.timeoutMs ?? 300_000);
  checkLayout(table);
  await ensureTtl(raw, tableName);
  return { created };
}

/** A readable summary of the table; NOT_FOUND (saying how to create it) when it does not exist. */
export async function describeTable(raw: DynamoDBClient, tableName: string): Promise<TableSummary> {
  const t = await describeRaw(raw, tableName);
  if (!t) {
    throw new GatehouseError('NOT_FOUND', `table ${tableName} does not exist; create it with \`gatehouse table create --table ${tableName}\``, {
      entity: 'table',
      id: tableName,
    });
  }
  const ttl = (await raw.send(new DescribeTimeToLiveCommand({ TableName: tableName }))).TimeToLiveDescription;
  return {
    tableName,
    status: t.TableStatus ?? 'UNKNOWN',
    arn: t.TableArn,
    itemCount: t.ItemCount ?? 0,
    sizeBytes: t.TableSizeBytes ?? 0,
    // Tables created on-demand report BillingModeSummary; old provisioned tables may omit it.
    billingMode: t.BillingModeSummary?.BillingMode ?? 'PROVISIONED',
    keySchema: keysOf(t.KeySchema),
    indexes: (t.GlobalSecondaryIndexes ?? [])
      .map((g) => ({
        name: g.IndexName ?? '?',
        ...keysOf(g.KeySchema),
        projection: g.Projection?.ProjectionType,
        status: g.IndexStatus,
        itemCount: g.ItemCount,
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    ttl: { attribute: ttl?.AttributeName, status: ttl?.TimeToLiveStatus ?? 'DISABLED' },
  };
}

/** Human-readable rendering of a summary (the CLI's default output). */
export function formatTableSummary(s: TableSummary): string {
  const lines = [
    `table       ${s.tableName}`,
    `status      ${s.status}`,
    ...(s.arn ? [`arn         ${s.arn}`] : []),
    `billing     ${s.billingMode}`,
    `items       ${s.itemCount} (approximate, ${s.sizeBytes} bytes)`,
    `key         ${s.keySchema.partitionKey} / ${s.keySchema.sortKey}`,
    `ttl         ${s.ttl.status}${s.ttl.attribute ? ` on ${s.ttl.attribute}` : ''}`,
    `indexes     ${s.indexes.length}`,
    ...s.indexes.map((i) => `  ${i.name.padEnd(6)} ${i.partitionKey} / ${i.sortKey}  projection ${i.projection}  ${i.status}`),
  ];
  return lines.join('\n');
}

/** Deletes the table and waits until it is gone. Returns `deleted: false` if it did not exist. */
export async function deleteTable(raw: DynamoDBClient, tableName: string, opts: { timeoutMs?: number } = {}): Promise<{ deleted: boolean }> {
  try {
    await raw.send(new DeleteTableCommand({ TableName: tableName }));
  } catch (e) {
    if (e instanceof ResourceNotFoundException) return { deleted: false };
    throw e;
  }
  const deadline = Date.now() + (opts.timeoutMs ?? 300_000);
  while (await describeRaw(raw, tableName)) {
    if (Date.now() > deadline) throw new GatehouseError('RETRYABLE', `table ${tableName} is still being deleted`);
    await sleep(500);
  }
  return { deleted: true };
}
