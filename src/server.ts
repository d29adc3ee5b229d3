/**
 * `npm start`: runs Gatehouse as an HTTP service.
 *  - With AWS_ENDPOINT_URL_DYNAMODB (or AWS_REGION) set: uses that DynamoDB and GATEHOUSE_TABLE,
 *    spawns nothing.
 *  - Otherwise: starts the embedded DynamoDB Local (in memory, or --data-dir DIR to keep data),
 *    creates the table, loads the demo data, and stops DynamoDB Local on SIGINT/SIGTERM.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { isProduction, readEnv } from './config.ts';
import { startDynamoLocal, type DynamoLocal } from './engine/local.ts';
import { createGatehouse, VERSION } from './gatehouse.ts';
import { createLogger } from './http/logger.ts';
import { serveNode } from './http/node.ts';
import { createDynamoClients } from './store/client.ts';
import { describeTable, ensureTable } from './store/admin.ts';
import { seedDemo } from './demo/seed.ts';

const HELP = `Usage: npm start -- [options]

Starts the Gatehouse HTTP service.

Options:
  --data-dir DIR   keep the embedded DynamoDB Local's data in DIR across restarts (default: in memory)
  --port N         HTTP port (default: $PORT or 3000)
  --no-demo        do not load the demo data
  -h, --help       show this help

Environment: AWS_ENDPOINT_URL_DYNAMODB / AWS_REGION (use that DynamoDB instead of the embedded one),
GATEHOUSE_TABLE (default app_data), GATEHOUSE_ADMIN_API_KEY, GATEHOUSE_CURSOR_SECRET, LOG_LEVEL.`;

async function main() {
  const { values } = parseArgs({
    options: {
      'data-dir': { type: 'string' },
      port: { type: 'string' },
      'no-demo': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const env = readEnv();
  const logger = createLogger(env.LOG_LEVEL);
  const port = values.port !== undefined ? Number(values.port) : env.PORT;
  const embedded = !env.AWS_ENDPOINT_URL_DYNAMODB && !env.AWS_REGION;

  let local: DynamoLocal | undefined;
  let stopping = false;
  const stopLocal = async () => {
    if (local) await local.stop();
  };

  let endpoint = env.AWS_ENDPOINT_URL_DYNAMODB;
  if (embedded) {
    console.log(`Starting the embedded DynamoDB Local (${values['data-dir'] ? `data in ${values['data-dir']}` : 'in memory'})…`);
    local = await startDynamoLocal({ dataDir: values['data-dir'] });
    endpoint = local.endpoint;
  }
  try {
    const clients = createDynamoClients({ endpoint });
    if (embedded || endpoint) {
      const { created } = await ensureTable(clients.raw, env.GATEHOUSE_TABLE);
      if (created) console.log(`Created table ${env.GATEHOUSE_TABLE}.`);
    } else {
      await describeTable(clients.raw, env.GATEHOUSE_TABLE).catch((e) => {
        throw new Error(`Table ${env.GATEHOUSE_TABLE} is not reachable (${(e as Error).message}). Deploy it (gatehouse table template) or run gatehouse table create.`);
      });
    }

    let adminApiKey = env.GATEHOUSE_ADMIN_API_KEY;
    let devKey = false;
    if (!adminApiKey && !isProduction(env)) {
      adminApiKey = `gh_dev_${randomBytes(18).toString('base64url')}`;
      devKey = true;
    }
    const gh = await createGatehouse({ endpoint: endpoint ?? undefined, clients, tableName: env.GATEHOUSE_TABLE, cursorSecret: env.GATEHOUSE_CURSOR_SECRET, adminApiKey, logger });
    const demo = embedded && !values['no-demo'] ? await seedDemo(gh) : undefined;
    const server = await serveNode(gh.app(), port);
    const base = `http://localhost:${server.port}`;

    console.log(`\nGatehouse ${VERSION} is up.`);
    console.log(`  API        ${base}/v1`);
    console.log(`  Reference  ${base}/docs`);
    console.log(`  OpenAPI    ${base}/openapi.json`);
    console.log(`  Health     ${base}/health`);
    console.log(`  DynamoDB   ${endpoint ?? 'AWS'} (table ${env.GATEHOUSE_TABLE})`);
    if (devKey) console.log(`\nDevelopment admin API key (this run only; never printed in production):\n  ${adminApiKey}`);
    if (demo) {
      for (const line of demo.summary) console.log(line);
      for (const ex of demo.examples) {
        console.log(`\n# ${ex.title}\ncurl -s -X POST ${base}${ex.path} -H 'authorization: Bearer ${devKey ? adminApiKey : '$GATEHOUSE_ADMIN_API_KEY'}' -H 'content-type: application/json' -d '${JSON.stringify(ex.body)}'`);
      }
    }
    console.log('\nPress Ctrl+C to stop.');

    const shutdown = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down');
      await server.close().catch(() => undefined);
      gh.close();
      await stopLocal();
      process.exit(0);
    };
    process.on('SIGINT', () => void shutdown('SIGINT'));
    process.on('SIGTERM', () => void shutdown('SIGTERM'));
  } catch (err) {
    await stopLocal();
    throw err;
  }
}

main().catch((err) => {
  console.error(`gatehouse: ${(err as Error).message}`);
  process.exit(1);
});
