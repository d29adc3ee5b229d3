/**
 * What every CLI command group shares: where output goes, the environment, and how to reach the
 * table with errors that say what to do. Groups get a CliContext instead of touching
 * process.stdout/process.env directly, so tests can run commands in-process and capture output.
 */
import type { Command } from 'commander';
import { readEnv } from '../config.ts';
import { createDynamoClients } from '../store/client.ts';
import { isGatehouseError } from '../errors.ts';

export interface CliContext {
  /** Standard output (help, results). Strings are written as given: add the '\n'. */
  out(s: string): void;
  /** Standard error (diagnostics). */
  err(s: string): void;
  env: NodeJS.ProcessEnv;
}

export const defaultContext = (): CliContext => ({
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  env: process.env,
});

/** A failure the user caused by how they called the command: exit code 2, like commander's own. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface TargetOptions {
  table?: string;
  endpoint?: string;
}

/** Adds the options that choose the DynamoDB endpoint and table (shared by every data command). */
export function targetOptions(cmd: Command): Command {
  return cmd
    .option('-t, --table <name>', 'table name (default: $GATEHOUSE_TABLE, else app_data)')
    .option('-e, --endpoint <url>', 'DynamoDB endpoint (default: $AWS_ENDPOINT_URL_DYNAMODB, else AWS in $AWS_REGION)');
}

export interface TableTarget {
  raw: ReturnType<typeof createDynamoClients>['raw'];
  doc: ReturnType<typeof createDynamoClients>['doc'];
  tableName: string;
  /** For messages: the URL, or "AWS DynamoDB (region …)". */
  where: string;
}

/**
 * Opens clients for the chosen table, runs `fn`, translates connection/credential errors into
 * instructions, and always releases the clients (so the CLI exits without waiting on sockets).
 */
export async function withTable<T>(ctx: CliContext, opts: TargetOptions, fn: (t: TableTarget) => Promise<T>): Promise<T> {
  const env = readEnv(ctx.env);
  const endpoint = opts.endpoint ?? env.AWS_ENDPOINT_URL_DYNAMODB;
  const tableName = opts.table ?? env.GATEHOUSE_TABLE;
  if (!/^[a-zA-Z0-9_.-]{3,255}$/.test(tableName)) {
    throw new UsageError(`invalid table name "${tableName}": use 3-255 letters, digits, '_', '-' or '.'`);
  }
  const { raw, doc } = createDynamoClients({ endpoint, region: env.AWS_REGION });
  const where = endpoint ?? `AWS DynamoDB (region ${env.AWS_REGION ?? 'from your AWS config'})`;
  try {
    return await fn({ raw, doc, tableName, where });
  } catch (e) {
    throw explainDynamoError(e, where);
  } finally {
    raw.destroy();
  }
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Turns the SDK's low-level failures into a message that says what to do next. */
export function explainDynamoError(e: unknown, where: string): unknown {
  if (!(e instanceof Error) || isGatehouseError(e) || e instanceof UsageError) return e;
  const code = (e as { code?: string }).code;
  const say = (msg: string) => new Error(`${msg}\n  (${e.name}: ${e.message})`, { cause: e });
  if ((code && NETWORK_CODES.has(code)) || e.name === 'TimeoutError') {
    return say(`no DynamoDB answered at ${where} — start one (e.g. \`npm start\` runs DynamoDB Local) or set AWS_ENDPOINT_URL_DYNAMODB / --endpoint to one that runs`);
  }
  if (/Region is missing/i.test(e.message)) {
    return say('no AWS region configured — set AWS_REGION (e.g. eu-west-1), or set AWS_ENDPOINT_URL_DYNAMODB to use DynamoDB Local');
  }
  if (e.name === 'CredentialsProviderError') {
    return say('no AWS credentials found — configure them (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, SSO), or set AWS_ENDPOINT_URL_DYNAMODB to use DynamoDB Local');
  }
  if (['UnrecognizedClientException', 'InvalidSignatureException', 'ExpiredTokenException'].includes(e.name)) {
    return say(`AWS rejected the credentials at ${where} — refresh them (e.g. \`aws sso login\`) or check AWS_PROFILE`);
  }
  if (e.name === 'AccessDeniedException') {
    return say(`access denied at ${where} — the credentials need dynamodb:CreateTable/DescribeTable/UpdateTimeToLive/DescribeTimeToLive on the table`);
  }
  return e;
}
