/**
 * `gatehouse deploy bundle`: builds the real zip, unzips it into an empty directory (a stand-in for
 * /var/task: no node_modules of ours anywhere above it), and invokes the bundled handlers in a
 * child Node process, with the environment the template gives the functions, against DynamoDB Local.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import httpEvent from '../lambda/fixtures/http-api-v2-event.json' with { type: 'json' };
import authEvent from '../lambda/fixtures/authorizer-v2-event.json' with { type: 'json' };
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { main } from '../cli/main.ts';
import type { CliContext } from '../cli/context.ts';
import { buildLambdaBundle, zipDirectory, type LambdaBundle } from './bundle.ts';
import { deployTemplate } from './template.ts';

const ADMIN_KEY = 'gh_bundle_admin_key_0123456789abcdef';

/** A hierarchy that is not built in: shipped with --hierarchy, loaded from a path in the bundle. */
const mine = {
  name: 'mine',
  tenant: { kind: 'org' },
  kinds: { site: { parent: 'org' } },
};

let dir: string;
let task: string;
let bundle: LambdaBundle;
let tables: TestTable[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-bundle-test-'));
  writeFileSync(path.join(dir, 'mine.json'), JSON.stringify(mine));
  const [built, ...ts] = await Promise.all([
    buildLambdaBundle({ out: path.join(dir, 'out', 'lambda.zip'), hierarchies: [path.join(dir, 'mine.json')], stageDir: path.join(dir, 'stage') }),
    createTestTable('bundle_a'),
    createTestTable('bundle_b'),
  ]);
  bundle = built;
  tables = ts;
  task = path.join(dir, 'task');
  mkdirSync(task);
  // The zip itself when unzip is there; otherwise the tree it was made from.
  const unzip = spawnSync('unzip', ['-q', bundle.zip, '-d', task], { encoding: 'utf8' });
  if (unzip.error) cpSync(path.join(dir, 'stage'), task, { recursive: true });
  else expect(unzip.status, unzip.stderr).toBe(0);
}, 90_000);

afterAll(async () => {
  await Promise.all(tables.map((t) => t.drop()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

function apiEvent(method: string, p: string, o: { token?: string; body?: unknown } = {}) {
  const e = clone(httpEvent) as Omit<typeof httpEvent, 'pathParameters'> & { body?: string; headers: Record<string, string>; pathParameters?: Record<string, string> };
  e.routeKey = p.startsWith('/v1/') ? 'ANY /v1/{proxy+}' : `${method} ${p}`;
  e.rawPath = p;
  e.requestContext.routeKey = e.routeKey;
  e.requestContext.http.method = method;
  e.requestContext.http.path = p;
  e.pathParameters = p.startsWith('/v1/') ? { proxy: p.slice(4) } : undefined;
  if (o.token) e.headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) {
    e.body = JSON.stringify(o.body);
    e.headers['content-type'] = 'application/json';
    e.headers['content-length'] = String(Buffer.byteLength(e.body));
  }
  return e;
}

function authorizerEvent(method: string, p: string, token: string) {
  const e = clone(authEvent) as typeof authEvent & { headers: Record<string, string> };
  e.routeKey = 'ANY /v1/{proxy+}';
  e.rawPath = p;
  e.routeArn = `arn:aws:execute-api:us-east-1:123456789012:abcdef123/$default/${method}${p}`;
  e.identitySource = [`Bearer ${token}`];
  e.headers.authorization = `Bearer ${token}`;
  e.requestContext = { ...e.requestContext, routeKey: e.routeKey, http: { ...e.requestContext.http, method, path: p } };
  e.pathParameters = { proxy: p.slice(4) } as never;
  return e;
}

type Step = { fn: 'api' | 'authorizer'; event: unknown };
type Outcome = { value?: { statusCode?: number; body?: string; headers?: Record<string, string>; policyDocument?: { Statement: { Effect: string }[] }; context?: Record<string, unknown> }; error?: { name: string; message: string } };

/**
 * Runs the steps in one child process (one Lambda container: cold start, then warm invocations).
 * `{lastId}` in an event is replaced by the `id` of the last response body that had one.
 */
const RUNNER = `
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const [planFile, outFile] = process.argv.slice(2);
const plan = JSON.parse(readFileSync(planFile, 'utf8'));
const mods = {};
const results = [];
let lastId = '';
for (const step of plan) {
  const event = JSON.parse(JSON.stringify(step.event).replaceAll('{lastId}', lastId));
  try {
    mods[step.fn] ??= await import(pathToFileURL(process.cwd() + '/lambda/' + step.fn + '.js').href);
    const value = await mods[step.fn].handler(event, { awsRequestId: 'req-' + results.length, functionName: 'gatehouse-' + step.fn });
    try { lastId = JSON.parse(value.body).id ?? lastId; } catch {}
    results.push({ value });
  } catch (e) {
    results.push({ error: { name: e?.name, message: e?.message } });
  }
}
writeFileSync(outFile, JSON.stringify(results));
process.exit(0);
`;

/** The functions' environment as the template declares it (values filled in), plus DynamoDB Local. */
function lambdaEnv(t: TestTable, hierarchy: string): NodeJS.ProcessEnv {
  const values: Record<string, string> = {
    GATEHOUSE_TABLE: t.tableName,
    GATEHOUSE_HIERARCHY: hierarchy,
    GATEHOUSE_CURSOR_SECRET: randomBytes(16).toString('hex'),
    GATEHOUSE_DATA_KEY: randomBytes(32).toString('base64'),
    NODE_ENV: 'production',
    GATEHOUSE_ADMIN_API_KEY: ADMIN_KEY,
  };
  const declared = (deployTemplate() as { Resources: { ApiFunction: { Properties: { Environment: { Variables: Record<string, unknown> } } } } }).Resources.ApiFunction.Properties.Environment.Variables;
  const always = Object.keys(declared).filter((k) => !(declared[k] as Record<string, unknown>)['Fn::If']);
  // A variable the template always sets must be set here too (and this list must not invent any).
  expect(Object.keys(values).filter((k) => k !== 'GATEHOUSE_ADMIN_API_KEY').sort()).toEqual(always.sort());
  return {
    PATH: process.env.PATH,
    HOME: dir,
    AWS_CONFIG_FILE: path.join(dir, 'no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: path.join(dir, 'no-aws-credentials'),
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_DYNAMODB: t.endpoint,
    LOG_LEVEL: 'silent',
    ...values,
  };
}

async function runInBundle(name: string, env: NodeJS.ProcessEnv, steps: Step[]): Promise<Outcome[]> {
  const runner = path.join(dir, 'runner.mjs');
  if (!existsSync(runner)) writeFileSync(runner, RUNNER);
  const plan = path.join(dir, `${name}.plan.json`);
  const out = path.join(dir, `${name}.out.json`);
  writeFileSync(plan, JSON.stringify(steps));
  const child = spawn(process.execPath, [runner, plan, out], { cwd: task, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  expect(code, `the bundled handlers crashed:\n${output.slice(-3000)}`).toBe(0);
  return JSON.parse(readFileSync(out, 'utf8')) as Outcome[];
}

describe('gatehouse deploy bundle', () => {
  it('builds the files the template names: ESM handlers, source maps, the /docs assets, the extra hierarchy', () => {
    const template = deployTemplate() as { Resources: Record<string, { Properties: { Handler?: string } }> };
    expect(bundle.handlers).toEqual([template.Resources.ApiFunction.Properties.Handler, template.Resources.AuthorizerFunction.Properties.Handler]);
    const files = bundle.files.map((f) => f.path);
    for (const f of ['lambda/api.js', 'lambda/api.js.map', 'lambda/authorizer.js', 'lambda/authorizer.js.map', 'lambda/package.json', 'node_modules/swagger-ui-dist/package.json', 'node_modules/swagger-ui-dist/swagger-ui-bundle.js', 'hierarchies/mine.json']) {
      expect(files).toContain(f);
      expect(existsSync(path.join(task, f)), `${f} in the zip`).toBe(true);
    }
    // Only swagger-ui-dist's assets come from node_modules; everything else is inside the bundles.
    expect(files.filter((f) => f.startsWith('node_modules/') && !f.startsWith('node_modules/swagger-ui-dist/'))).toEqual([]);
    expect(JSON.parse(readFileSync(path.join(task, 'lambda/package.json'), 'utf8'))).toEqual({ type: 'module' });
    expect(bundle.bytes).toBeGreaterThan(100_000);
    expect(bundle.bytes).toBeLessThan(20 * 1024 * 1024);
    expect(bundle.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the bundled API answers /health and /docs; the bundled authorizer refuses a bad token and allows the admin key', async () => {
    const [t] = tables;
    const unknownKey = `gh_${'0'.repeat(26)}_${'A'.repeat(43)}`; // well-formed: the authorizer looks it up in DynamoDB
    // Every asset the /docs page loads (src/http/docs.ts reads them from swagger-ui-dist on disk).
    const assets = [...new Set([...readFileSync(path.join(import.meta.dirname, '../http/docs.ts'), 'utf8').matchAll(/"docs\/assets\/([\w.-]+)"/g)].map((m) => m[1]))];
    expect(assets).toContain('swagger-ui-bundle.js');
    const results = await runInBundle('builtin', lambdaEnv(t, 'facilities'), [
      { fn: 'api', event: apiEvent('GET', '/health') },
      { fn: 'api', event: apiEvent('GET', '/docs') },
      { fn: 'api', event: apiEvent('GET', '/v1/tenants') },
      { fn: 'authorizer', event: authorizerEvent('GET', '/v1/tenants/T/roles', unknownKey) },
      { fn: 'authorizer', event: authorizerEvent('GET', '/v1/tenants/T/roles', 'not-a-token') },
      { fn: 'authorizer', event: authorizerEvent('POST', '/v1/permissions', ADMIN_KEY) },
      ...assets.map((a) => ({ fn: 'api' as const, event: apiEvent('GET', `/docs/assets/${a}`) })),
    ]);
    const [health, docs, anonymous, unknown, garbage, admin, ...served] = results;

    expect(health.error).toBeUndefined();
    expect(health.value?.statusCode).toBe(200);
    expect(JSON.parse(health.value!.body!)).toMatchObject({ status: 'ok', dynamodb: { endpoint: t.endpoint, table: t.tableName } });
    expect(docs.value?.statusCode).toBe(200);
    expect(docs.value?.body).toContain('swagger-ui');
    served.forEach((r, i) => expect(r.value?.statusCode, `/docs/assets/${assets[i]}: ${r.value?.body?.slice(0, 200)}`).toBe(200));
    expect(served[assets.indexOf('swagger-ui.css')].value?.headers?.['content-type']).toMatch(/^text\/css/);
    expect(anonymous.value?.statusCode).toBe(401);

    // API Gateway's protocol: throwing "Unauthorized" answers 401; it is an answer, not a crash.
    expect(unknown).toEqual({ error: { name: 'Error', message: 'Unauthorized' } });
    expect(garbage).toEqual({ error: { name: 'Error', message: 'Unauthorized' } });
    expect(admin.error).toBeUndefined();
    expect(admin.value?.policyDocument?.Statement[0].Effect).toBe('Allow');
    expect(admin.value?.context).toMatchObject({ permission: 'gatehouse:platform:admin' });
  });

  it('a hierarchy shipped with --hierarchy loads from its path in the bundle', async () => {
    const [, t] = tables;
    const results = await runInBundle('custom', lambdaEnv(t, 'hierarchies/mine.json'), [
      { fn: 'api', event: apiEvent('POST', '/v1/tenants', { token: ADMIN_KEY, body: { name: 'Bundled' } }) },
      { fn: 'api', event: apiEvent('POST', '/v1/tenants/{lastId}/scopes', { token: ADMIN_KEY, body: { kind: 'site', name: 'Main' } }) },
    ]);
    const [tenant, site] = results;
    expect(tenant.value?.statusCode, tenant.value?.body).toBe(201);
    expect(site.value?.statusCode, site.value?.body).toBe(201);
    expect(JSON.parse(site.value!.body!)).toMatchObject({ kind: 'site', name: 'Main' });
  });
});

describe('gatehouse deploy bundle: errors that say what to do', () => {
  async function run(args: string[]) {
    let out = '';
    let err = '';
    const ctx: CliContext = { out: (s) => void (out += s), err: (s) => void (err += s), env: {} };
    const code = await main(['node', 'gatehouse', 'deploy', 'bundle', ...args], ctx);
    return { code, out, err };
  }

  it('--help explains the zip; a bad --out or --hierarchy is refused before anything is built', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('lambda/api.handler');
    expect(help.out).toContain('--hierarchy <file>');

    const notZip = await run(['--out', path.join(dir, 'lambda.tar')]);
    expect(notZip.code).toBe(1);
    expect(notZip.err).toMatch(/\.zip file/);

    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ name: 'bad', tenant: { kind: 'org' }, kinds: {} }));
    const refused = await run(['--out', path.join(dir, 'x.zip'), '--hierarchy', bad]);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/Invalid hierarchy .*bad\.json: kinds: declare at least one scope kind/);
    expect(existsSync(path.join(dir, 'x.zip'))).toBe(false);
  });

  it('without the zip command: how to install it, and where the unzipped tree is', () => {
    expect(() => zipDirectory(path.join(dir, 'stage'), path.join(dir, 'y.zip'), 'gatehouse-no-such-zip-command')).toThrow(/apt-get install -y zip.*\n.*unzipped bundle is in/s);
  });
});
