import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { deleteTable, describeTable, ensureTable, formatTableSummary } from './admin.ts';

let t: TestTable;
beforeAll(async () => {
  t = await createTestTable();
});
afterAll(() => t?.drop());

describe('ensureTable', () => {
  it('creates the table with 5 GSIs (GSInPK/GSInSK, projection ALL) and TTL on expiresAt', async () => {
    const s = await describeTable(t.raw, t.tableName);
    expect(s.status).toBe('ACTIVE');
    expect(s.billingMode).toBe('PAY_PER_REQUEST');
    expect(s.keySchema).toEqual({ partitionKey: 'PK', sortKey: 'SK' });
    expect(s.indexes.map((i) => [i.name, i.partitionKey, i.sortKey, i.projection])).toEqual(
      [1, 2, 3, 4, 5].map((n) => [`GSI${n}`, `GSI${n}PK`, `GSI${n}SK`, 'ALL']),
    );
    expect(s.ttl).toEqual({ attribute: 'expiresAt', status: 'ENABLED' });
  });

  it('is idempotent', async () => {
    expect(await ensureTable(t.raw, t.tableName)).toEqual({ created: false });
    expect(await ensureTable(t.raw, t.tableName)).toEqual({ created: false });
  });

  it('tolerates concurrent callers: exactly one creates', async () => {
    const name = `${t.tableName}_race`;
    try {
      const results = await Promise.all([1, 2, 3].map(() => ensureTable(t.raw, name)));
      expect(results.filter((r) => r.created).length).toBeLessThanOrEqual(1);
      expect((await describeTable(t.raw, name)).ttl.status).toBe('ENABLED');
    } finally {
      await deleteTable(t.raw, name);
    }
  });

  it('refuses an existing table with another layout', async () => {
    const name = `${t.tableName}_foreign`;
    await t.raw.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      }),
    );
    try {
      await expect(ensureTable(t.raw, name)).rejects.toMatchObject({ code: 'CONFIG', message: expect.stringMatching(/not a Gatehouse table.*GSI1 is missing/) });
    } finally {
      await deleteTable(t.raw, name);
    }
  });
});

describe('describeTable / deleteTable', () => {
  it('renders a readable summary', async () => {
    const text = formatTableSummary(await describeTable(t.raw, t.tableName));
    expect(text).toContain(`table       ${t.tableName}`);
    expect(text).toContain('ttl         ENABLED on expiresAt');
    expect(text).toMatch(/GSI5\s+GSI5PK \/ GSI5SK {2}projection ALL/);
  });

  it('says how to create a missing table', async () => {
    await expect(describeTable(t.raw, 'no_such_table')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringContaining('gatehouse table create --table no_such_table'),
    });
  });

  it('deletes, and reports a missing table as not deleted', async () => {
    const name = `${t.tableName}_del`;
    await ensureTable(t.raw, name);
    expect(await deleteTable(t.raw, name)).toEqual({ deleted: true });
    expect(await deleteTable(t.raw, name)).toEqual({ deleted: false });
  });
});
