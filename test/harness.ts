/**
 * Test harness: a fresh, uniquely named Gatehouse table per caller on the run's shared DynamoDB
 * (started once by test/global-setup.ts). Real DynamoDB Local, never a mock.
 *
 *   let t: TestTable;
 *   beforeAll(async () => { t = await createTestTable(); });
 *   afterAll(() => t?.drop());
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { expect, inject } from 'vitest';
import { createDynamoClients } from '../src/store/client.ts';
import { deleteTable, ensureTable } from '../src/store/admin.ts';

export interface TestTable {
  raw: ReturnType<typeof createDynamoClients>['raw'];
  doc: ReturnType<typeof createDynamoClients>['doc'];
  tableName: string;
  endpoint: string;
  /** Deletes the table and releases the clients. Idempotent. */
  drop(): Promise<void>;
}

/** The shared endpoint (from global setup). */
export const testEndpoint = (): string => inject('dynamoEndpoint');

/** Tables not yet dropped; test/setup-file.ts drops leftovers after each file. */
const live = new Set<TestTable>();

/** e.g. `t_store_k3j9x2a1`: readable in DynamoDB Local listings, unique across parallel files. */
function uniqueName(name?: string) {
  const fromFile = expect.getState().testPath ? path.basename(expect.getState().testPath!).replace(/\.test\.ts$/, '') : 'test';
  const base = (name ?? fromFile).replace(/[^a-zA-Z0-9_.-]/g, '_').slice(0, 60);
  return `t_${base}_${randomBytes(5).toString('hex')}`;
}

export async function createTestTable(name?: string): Promise<TestTable> {
  const endpoint = testEndpoint();
  const { raw, doc } = createDynamoClients({ endpoint });
  const tableName = uniqueName(name);
  await ensureTable(raw, tableName);
  let dropped: Promise<void> | undefined;
  const t: TestTable = {
    raw,
    doc,
    tableName,
    endpoint,
    drop: () =>
      (dropped ??= (async () => {
        live.delete(t);
        try {
          await deleteTable(raw, tableName);
        } finally {
          raw.destroy();
        }
      })()),
  };
  live.add(t);
  return t;
}

/** Drops every table this file created and did not drop (called by test/setup-file.ts). */
export async function dropLeftoverTables() {
  await Promise.all([...live].map((t) => t.drop()));
}
