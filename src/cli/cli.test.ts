import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { createTestTable, testEndpoint, type TestTable } from '../../test/harness.ts';
import { deleteTable, describeTable } from '../store/admin.ts';
import type { CliContext } from './context.ts';
import { main } from './main.ts';

const bin = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));

/** Runs the CLI in-process with captured output and the given environment. */
async function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  let out = '';
  let err = '';
  const ctx: CliContext = { out: (s) => void (out += s), err: (s) => void (err += s), env };
  const code = await main(['node', 'gatehouse', ...args], ctx);
  return { code, out, err };
}

let t: TestTable;
beforeAll(async () => {
  t = await createTestTable();
});
afterAll(() => t?.drop());

describe('gatehouse table template', () => {
  it('prints the CloudFormation table (through bin/gatehouse.js)', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [bin, 'table', 'template', '--table-name', 'app_data'], {
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
    });
    const doc = YAML.parse(stdout);
    const table = doc.Resources.GatehouseTable;
    expect(table.Type).toBe('AWS::DynamoDB::Table');
    expect(table.Properties.TableName).toBe('app_data');
    expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    const gsis = table.Properties.GlobalSecondaryIndexes as { IndexName: string; KeySchema: { AttributeName: string }[]; Projection: unknown }[];
    expect(gsis.map((g) => g.IndexName)).toEqual(['GSI1', 'GSI2', 'GSI3', 'GSI4', 'GSI5']);
    for (const g of gsis) {
      expect(g.KeySchema.map((k) => k.AttributeName)).toEqual([`${g.IndexName}PK`, `${g.IndexName}SK`]);
      expect(g.Projection).toEqual({ ProjectionType: 'ALL' });
    }
  });

  it('omits TableName unless given', async () => {
    const { code, out } = await run(['table', 'template']);
    expect(code).toBe(0);
    expect(YAML.parse(out).Resources.GatehouseTable.Properties.TableName).toBeUndefined();
  });
});

describe('gatehouse table create / describe', () => {
  it('describes the table at AWS_ENDPOINT_URL_DYNAMODB (text and JSON)', async () => {
    const env = { AWS_ENDPOINT_URL_DYNAMODB: t.endpoint, GATEHOUSE_TABLE: t.tableName };
    const text = await run(['table', 'describe'], env);
    expect(text).toMatchObject({ code: 0, err: '' });
    expect(text.out).toContain(`table       ${t.tableName}`);
    expect(text.out).toContain('ttl         ENABLED on expiresAt');

    const json = await run(['table', 'describe', '--json', '--table', t.tableName], { AWS_ENDPOINT_URL_DYNAMODB: t.endpoint });
    expect(json.code).toBe(0);
    const s = JSON.parse(json.out);
    expect(s).toMatchObject({ endpoint: t.endpoint, tableName: t.tableName, status: 'ACTIVE', billingMode: 'PAY_PER_REQUEST' });
    expect(s.indexes).toHaveLength(5);
  });

  it('creates a table idempotently', async () => {
    const name = `${t.tableName}_cli`;
    try {
      const first = await run(['table', 'create', '--table', name, '--endpoint', testEndpoint()]);
      expect(first).toMatchObject({ code: 0, out: `created table ${name} at ${testEndpoint()}\n` });
      const again = await run(['table', 'create', '--table', name, '--endpoint', testEndpoint()]);
      expect(again.code).toBe(0);
      expect(again.out).toContain('already exists');
      expect((await describeTable(t.raw, name)).ttl.status).toBe('ENABLED');
    } finally {
      await deleteTable(t.raw, name);
    }
  });

  it('says how to create a missing table (exit 1)', async () => {
    const r = await run(['table', 'describe', '--table', 'missing_table'], { AWS_ENDPOINT_URL_DYNAMODB: t.endpoint });
    expect(r.code).toBe(1);
    expect(r.err).toContain('gatehouse table create --table missing_table');
  });

  it('says what to do when no DynamoDB answers (exit 1)', async () => {
    const r = await run(['table', 'describe'], { AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9' });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/no DynamoDB answered at http:\/\/127\.0\.0\.1:9 .*AWS_ENDPOINT_URL_DYNAMODB/);
  });
});

describe('usage and exit codes', () => {
  it('prints help with examples (exit 0)', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('Examples:');
    expect(r.out).toContain('AWS_ENDPOINT_URL_DYNAMODB');
    expect((await run(['table', 'describe', '--help'])).out).toContain('--endpoint <url>');
  });

  it('exits 2 on usage errors', async () => {
    expect((await run(['nope'])).code).toBe(2);
    expect((await run(['table', 'describe', '--bogus'])).code).toBe(2);
    expect((await run([])).code).toBe(2); // no command: help on stderr
    const bad = await run(['table', 'describe', '--table', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('invalid table name');
  });
});
