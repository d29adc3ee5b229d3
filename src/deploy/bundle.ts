/**
 * The Lambda code zip the deploy template names (`CodeS3Bucket` / `CodeS3Key`), built by
 * `gatehouse deploy bundle` (`npm run build:lambda`). One zip serves both functions:
 *
 *   lambda/api.js, lambda/authorizer.js   esbuild bundles of src/lambda/{api,authorizer}.ts: ESM
 *                                         (lambda/package.json says "type": "module", so Lambda
 *                                         loads the `.js` files as ES modules), Node 20, minified,
 *                                         every dependency inside, including the AWS SDK v3
 *   lambda/*.js.map                       source maps (positions only, no sources); stack traces
 *                                         use them with NODE_OPTIONS=--enable-source-maps
 *   node_modules/swagger-ui-dist/…        the four assets /docs serves (src/http/docs.ts reads
 *                                         them from disk through the package's location), with
 *                                         the package's licence files
 *   hierarchies/<name>.json               only the files given with --hierarchy: set the
 *                                         template's Hierarchy parameter to hierarchies/<name>.json
 *                                         (paths resolve against /var/task, the zip's root); the
 *                                         three built-in hierarchies are inside the code
 *
 * Why the AWS SDK is bundled rather than taken from the Lambda runtime: the runtime's copy is
 * whatever version AWS ships with nodejs20.x at the time (it lags and changes under a deployed
 * function without notice), while the bundle carries the version the lockfile pins and the tests
 * run against; it also keeps the zip self-contained (the bundle test runs it outside Lambda, with
 * no node_modules). The cost is about a megabyte of minified code per handler.
 *
 * The zip is written with the system `zip` command (no npm zip library is installed, and this is
 * the only place that needs one).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ASSETS as DOCS_ASSETS } from '../http/docs.ts';
import { BUILT_IN_HIERARCHIES, loadHierarchy } from '../tenancy/hierarchy.ts';
import { LAMBDA_HANDLERS } from './template.ts';

/** The repository root (this file is src/deploy/bundle.ts). */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** What src/http/docs.ts serves from swagger-ui-dist (its ASSETS), with the package's licence files. */
export const SWAGGER_UI_FILES = ['package.json', 'LICENSE', 'NOTICE', 'swagger-ui-bundle.js.LICENSE.txt', 'swagger-ui-standalone-preset.js.LICENSE.txt', ...Object.keys(DOCS_ASSETS)];

/**
 * In an ES module bundle, CommonJS dependencies that `require()` Node built-ins need a real
 * `require`; esbuild's shim throws "Dynamic require of … is not supported" without one.
 */
const REQUIRE_SHIM = "import { createRequire as __gatehouseCreateRequire } from 'node:module'; const require = __gatehouseCreateRequire(import.meta.url);";

export interface LambdaBundleOptions {
  /** The zip to write; relative paths resolve against the working directory. */
  out: string;
  /** Hierarchy files to ship as hierarchies/<file name> (validated first). */
  hierarchies?: string[];
  /** An empty or new directory to build the unzipped tree in (kept afterwards); default: a temporary directory, removed. */
  stageDir?: string;
  /** Progress lines (without '\n'). */
  progress?: (line: string) => void;
}

export interface LambdaBundle {
  /** Absolute path of the zip. */
  zip: string;
  bytes: number;
  sha256: string;
  /** The Handler values it serves, as the template declares them. */
  handlers: string[];
  /** Every file in the zip, relative to its root, with its size. */
  files: { path: string; bytes: number }[];
}

/** `lambda/api.handler` → { file: 'lambda/api', exportName: 'handler' }. */
export function splitHandler(handler: string): { file: string; exportName: string } {
  const dot = handler.lastIndexOf('.');
  return { file: handler.slice(0, dot), exportName: handler.slice(dot + 1) };
}

/** A path as the user would type it: relative to the working directory when inside it. */
export function displayPath(p: string): string {
  const rel = path.relative(process.cwd(), p);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : p;
}

export const formatBytes = (n: number) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MiB` : `${(n / 1024).toFixed(1)} KiB`);

async function loadEsbuild(): Promise<typeof import('esbuild')> {
  try {
    return await import('esbuild');
  } catch (e) {
    throw new Error(`esbuild is not installed (it is a devDependency): run \`npm ci\` (without --omit=dev) in ${ROOT} and try again\n  (${(e as Error).message})`, { cause: e });
  }
}

function walk(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((d) => (d.isDirectory() ? walk(path.join(dir, d.name), base) : [path.relative(base, path.join(dir, d.name))]))
    .sort();
}

/** Lambda runs the code as another user than the one who zipped it: everything world-readable. */
function makeReadable(dir: string) {
  chmodSync(dir, 0o755);
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) makeReadable(p);
    else chmodSync(p, 0o644);
  }
}

function checkHierarchies(files: string[]): { from: string; to: string }[] {
  const seen = new Map<string, string>();
  return files.map((f) => {
    const from = path.resolve(f);
    const name = path.basename(from);
    if (!name.endsWith('.json')) throw new Error(`--hierarchy ${f}: a hierarchy is a .json file`);
    if ((BUILT_IN_HIERARCHIES as readonly string[]).includes(name.slice(0, -5))) {
      // Not ambiguous for the loader (only the bare name means the built-in), but confusing to read.
      throw new Error(`--hierarchy ${f}: "${name.slice(0, -5)}" is a built-in hierarchy's name; rename the file`);
    }
    if (seen.has(name)) throw new Error(`--hierarchy ${f}: ${seen.get(name)} has the same file name; both would be hierarchies/${name}`);
    seen.set(name, f);
    loadHierarchy(from); // throws a CONFIG error naming the file and the problem
    return { from, to: `hierarchies/${name}` };
  });
}

const ZIP_MISSING =
  'the `zip` command is not installed, and the bundle needs it: install it (Debian/Ubuntu: `apt-get install -y zip`; Alpine: `apk add zip`; macOS: `brew install zip`) and run again.';

export const zipAvailable = (command = 'zip') => !spawnSync(command, ['-v'], { stdio: 'ignore' }).error;

/** Zips the staged tree with the system `zip` (`command` is for tests). */
export function zipDirectory(stage: string, zipPath: string, command = 'zip') {
  if (!zipAvailable(command)) throw new Error(`${ZIP_MISSING}\n  The unzipped bundle is in ${stage}: \`cd ${stage} && zip -r -X ${zipPath} .\` gives the same zip.`);
  mkdirSync(path.dirname(zipPath), { recursive: true });
  rmSync(zipPath, { force: true }); // zip would otherwise update an existing archive, keeping stale files
  const r = spawnSync(command, ['-q', '-r', '-X', zipPath, ...readdirSync(stage).sort()], { cwd: stage, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`zip failed (exit ${r.status}): ${(r.stderr || r.stdout || '').trim() || 'no output'}\n  The unzipped bundle is in ${stage}.`);
}

/** Builds the zip. Throws with a message that says what to do (missing esbuild or zip, bad hierarchy, build errors). */
export async function buildLambdaBundle(o: LambdaBundleOptions): Promise<LambdaBundle> {
  const progress = o.progress ?? (() => undefined);
  const zipPath = path.resolve(o.out);
  if (!zipPath.endsWith('.zip')) throw new Error(`--out ${o.out}: the bundle is a .zip file (e.g. dist/lambda.zip)`);
  const extraHierarchies = checkHierarchies(o.hierarchies ?? []);
  if (!zipAvailable()) throw new Error(ZIP_MISSING); // before spending a build on it
  const esbuild = await loadEsbuild();

  const handlers = [LAMBDA_HANDLERS.api, LAMBDA_HANDLERS.authorizer];
  const entries = handlers.map((h) => ({ handler: h, ...splitHandler(h), source: path.join(ROOT, 'src', `${splitHandler(h).file}.ts`) }));
  for (const e of entries) if (!existsSync(e.source)) throw new Error(`the template's handler ${e.handler} needs ${path.relative(ROOT, e.source)}, which does not exist`);

  const stage = o.stageDir ? path.resolve(o.stageDir) : mkdtempSync(path.join(tmpdir(), 'gatehouse-lambda-'));
  if (o.stageDir) {
    if (existsSync(stage) && readdirSync(stage).length) throw new Error(`the staging directory ${stage} is not empty`);
    mkdirSync(stage, { recursive: true });
  }
  let keepStage = !!o.stageDir;
  try {
    progress(`bundling ${entries.map((e) => path.relative(ROOT, e.source)).join(', ')} with esbuild ${esbuild.version} (node20, ESM, minified, source maps)…`);
    const result = await esbuild
      .build({
        absWorkingDir: ROOT,
        entryPoints: Object.fromEntries(entries.map((e) => [e.file, e.source])),
        outdir: stage,
        bundle: true,
        platform: 'node',
        target: 'node20',
        format: 'esm',
        minify: true,
        // Error names and class names stay readable in logs (and for code that looks at them).
        keepNames: true,
        sourcemap: true,
        sourcesContent: false,
        banner: { js: REQUIRE_SHIM },
        metafile: true,
        logLevel: 'silent',
      })
      .catch((e: unknown) => {
        const errors = (e as { errors?: { text: string; location?: { file: string; line: number } | null }[] }).errors ?? [];
        const lines = errors.map((m) => `  ${m.location ? `${m.location.file}:${m.location.line}: ` : ''}${m.text}`);
        throw new Error(`esbuild could not bundle the Lambda handlers${lines.length ? `:\n${lines.join('\n')}` : `: ${(e as Error).message}`}`, { cause: e });
      });
    for (const w of result.warnings) progress(`warning: ${w.location ? `${w.location.file}:${w.location.line}: ` : ''}${w.text}`);
    for (const e of entries) {
      const out = result.metafile.outputs[path.relative(ROOT, path.join(stage, `${e.file}.js`)).split(path.sep).join('/')];
      if (!out) throw new Error(`esbuild wrote no ${e.file}.js`);
      if (!out.exports.includes(e.exportName)) throw new Error(`${path.relative(ROOT, e.source)} does not export "${e.exportName}", which the template's handler ${e.handler} names`);
      progress(`  ${e.file}.js  ${formatBytes(out.bytes)}  (exports ${e.exportName})`);
    }
    writeFileSync(path.join(stage, 'lambda', 'package.json'), `${JSON.stringify({ type: 'module' })}\n`);

    const swaggerDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
    const swaggerTo = path.join(stage, 'node_modules', 'swagger-ui-dist');
    mkdirSync(swaggerTo, { recursive: true });
    for (const f of SWAGGER_UI_FILES) {
      if (!existsSync(path.join(swaggerDir, f))) throw new Error(`swagger-ui-dist has no ${f} (in ${swaggerDir}): run \`npm ci\`, or update SWAGGER_UI_FILES in src/deploy/bundle.ts / ASSETS in src/http/docs.ts`);
      copyFileSync(path.join(swaggerDir, f), path.join(swaggerTo, f));
    }
    progress(`  node_modules/swagger-ui-dist/  the /docs assets`);

    for (const h of extraHierarchies) {
      mkdirSync(path.join(stage, 'hierarchies'), { recursive: true });
      copyFileSync(h.from, path.join(stage, h.to));
      progress(`  ${h.to}  (Hierarchy=${h.to})`);
    }

    makeReadable(stage);
    progress(`zipping into ${displayPath(zipPath)}…`);
    keepStage = true; // if zip fails, its message points at the staged tree
    zipDirectory(stage, zipPath);
    keepStage = !!o.stageDir;

    const files = walk(stage).map((p) => ({ path: p.split(path.sep).join('/'), bytes: statSync(path.join(stage, p)).size }));
    const sha256 = createHash('sha256').update(readFileSync(zipPath)).digest('hex');
    return { zip: zipPath, bytes: statSync(zipPath).size, sha256, handlers, files };
  } finally {
    if (!keepStage) rmSync(stage, { recursive: true, force: true });
  }
}
