/**
 * `npm run bench [-- --json FILE] [--only a,b]`: measures request counts, waves, latency and
 * throughput on DynamoDB Local (embedded, or AWS_ENDPOINT_URL_DYNAMODB) in one run, prints a
 * table, and with --json writes a flat JSON object of named figures (a contract: names are kept).
 * DynamoDB Local is SQLite underneath: absolute figures mean little, ratios in one run mean a lot.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { startDynamoLocal, type DynamoLocal } from '../src/engine/local.ts';
import { createDynamoClients } from '../src/store/client.ts';
import { deleteTable, ensureTable } from '../src/store/admin.ts';
import { Store } from '../src/store/store.ts';
import { benchAccess } from './access.ts';
import { benchEntitlements } from './entitlements.ts';
import { benchHttp } from './http.ts';
import { benchStore } from './store.ts';

export interface BenchContext {
  store: Store;
  endpoint: string;
  log: (s: string) => void;
}

type Section = (ctx: BenchContext) => Promise<Record<string, number>>;

const SECTIONS: Record<string, Section> = {
  store: (c) => benchStore(c),
  access: (c) => benchAccess(c),
  entitlements: (c) => benchEntitlements(c),
  http: (c) => benchHttp(c),
};

async function main() {
  const { values } = parseArgs({ options: { json: { type: 'string' }, only: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    console.log(`Usage: npm run bench -- [--json FILE] [--only ${Object.keys(SECTIONS).join(',')}]`);
    return;
  }
  const only = values.only ? values.only.split(',') : Object.keys(SECTIONS);
  for (const name of only) if (!SECTIONS[name]) throw new Error(`Unknown bench section ${name}; choose from ${Object.keys(SECTIONS).join(', ')}`);

  let local: DynamoLocal | undefined;
  let endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  if (!endpoint) {
    console.error('Starting DynamoDB Local…');
    local = await startDynamoLocal();
    endpoint = local.endpoint;
  }
  const clients = createDynamoClients({ endpoint });
  const tableName = `bench_${randomBytes(4).toString('hex')}`;
  const figures: Record<string, number> = {};
  try {
    await ensureTable(clients.raw, tableName);
    const store = new Store({ doc: clients.doc, tableName });
    for (const name of only) {
      const t0 = performance.now();
      console.error(`bench: ${name}…`);
      Object.assign(figures, await SECTIONS[name]({ store, endpoint, log: (s) => console.error(`  ${s}`) }));
      console.error(`bench: ${name} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
  } finally {
    await deleteTable(clients.raw, tableName).catch(() => undefined);
    clients.raw.destroy();
    await local?.stop();
  }
  const width = Math.max(...Object.keys(figures).map((k) => k.length));
  console.log(`\n${'figure'.padEnd(width)}  value`);
  for (const [k, v] of Object.entries(figures)) console.log(`${k.padEnd(width)}  ${v}`);
  if (values.json) {
    writeFileSync(values.json, `${JSON.stringify(figures, null, 2)}\n`);
    console.log(`\nwrote ${values.json}`);
  }
}

main().catch((err) => {
  console.error(`bench: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
