import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createDynamoClients } from '../store/client.ts';
import { describeTable, ensureTable } from '../store/admin.ts';
import { checkJava, freePort, startDynamoLocal, type DynamoLocal } from './local.ts';

const dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-local-'));
const started: DynamoLocal[] = [];
afterAll(async () => {
  await Promise.all(started.map((d) => d.stop()));
  rmSync(dataDir, { recursive: true, force: true });
});

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('startDynamoLocal', () => {
  it('persists tables in dataDir across restarts and leaves no process behind', async () => {
    const port = await freePort();
    const first = await startDynamoLocal({ port, dataDir });
    started.push(first);
    expect(first.endpoint).toBe(`http://127.0.0.1:${port}`);
    const pid = first.process.pid!;
    const c1 = createDynamoClients({ endpoint: first.endpoint });
    try {
      expect(await ensureTable(c1.raw, 'persisted')).toEqual({ created: true });
    } finally {
      c1.raw.destroy();
    }
    await first.stop();
    expect(isAlive(pid)).toBe(false);
    await first.stop(); // idempotent

    const second = await startDynamoLocal({ dataDir }); // same data, a new free port
    started.push(second);
    const c2 = createDynamoClients({ endpoint: second.endpoint });
    try {
      const summary = await describeTable(c2.raw, 'persisted');
      expect(summary.status).toBe('ACTIVE');
      expect(summary.indexes).toHaveLength(5);
      expect(await ensureTable(c2.raw, 'persisted')).toEqual({ created: false });
    } finally {
      c2.raw.destroy();
    }
    const pid2 = second.process.pid!;
    await second.stop();
    expect(isAlive(pid2)).toBe(false);
  });

  it('keeps data in memory without a dataDir', async () => {
    const a = await startDynamoLocal();
    started.push(a);
    const c = createDynamoClients({ endpoint: a.endpoint });
    try {
      await ensureTable(c.raw, 'ephemeral');
    } finally {
      c.raw.destroy();
    }
    await a.stop();
    const b = await startDynamoLocal();
    started.push(b);
    const c2 = createDynamoClients({ endpoint: b.endpoint });
    try {
      await expect(describeTable(c2.raw, 'ephemeral')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    } finally {
      c2.raw.destroy();
      await b.stop();
    }
  });

  it('fails clearly when the port is taken', async () => {
    const busy = await startDynamoLocal();
    started.push(busy);
    await expect(startDynamoLocal({ port: busy.port })).rejects.toThrow(`port ${busy.port} is already in use`);
    await busy.stop();
  });
});

describe('checkJava', () => {
  it('accepts the installed Java', () => {
    expect(checkJava().major).toBeGreaterThanOrEqual(17);
  });
  it('says how to install Java when it is missing', () => {
    expect(() => checkJava('java-that-does-not-exist')).toThrow(/apt-get install -y openjdk-17-jre-headless.*AWS_ENDPOINT_URL_DYNAMODB/s);
  });
});
