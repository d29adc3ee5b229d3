/**
 * The `gatehouse` command line. Each command group lives in its own file and exports
 * `register…Commands(program, ctx)`; add new groups in buildProgram() below.
 *
 * Exit codes: 0 ok, 1 failure, 2 usage (unknown command/option, missing argument, bad value).
 */
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { defaultContext, UsageError, type CliContext } from './context.ts';
import { registerTableCommands } from './table.ts';
import { registerDeployCommands } from './deploy.ts';
import { registerJobsCommands } from './jobs.ts';
import { registerAuditCommands } from './audit.ts';
import { registerApiKeyCommands } from './apikey.ts';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

export function buildProgram(ctx: CliContext = defaultContext()): Command {
  const program = new Command('gatehouse')
    .description('Gatehouse: multi-tenant account and access management on one DynamoDB table')
    .version(pkg.version, '-V, --version')
    .addHelpText(
      'after',
      `
Environment:
  AWS_ENDPOINT_URL_DYNAMODB  DynamoDB endpoint, e.g. http://127.0.0.1:8000 for DynamoDB Local (unset: AWS)
  AWS_REGION                 AWS region when talking to AWS
  GATEHOUSE_TABLE            table name (default app_data)

Examples:
  $ gatehouse table template --table-name app_data > table.yaml
  $ gatehouse table create --endpoint http://127.0.0.1:8000
  $ gatehouse table describe
  $ gatehouse apikey create --tenant <tenantId> --role tenant-auditor --name billing-sync
  $ gatehouse help table`,
    );

  // Command groups. Keep one file per group.
  registerTableCommands(program, ctx);
  registerDeployCommands(program, ctx);
  registerJobsCommands(program, ctx);
  registerAuditCommands(program, ctx);
  registerApiKeyCommands(program, ctx);

  // Settings every (sub)command needs, applied after registration so groups cannot forget them:
  // throw instead of exiting (main() picks the exit code), write through ctx, hint at --help.
  const configure = (cmd: Command) => {
    cmd
      .exitOverride()
      .configureOutput({ writeOut: ctx.out, writeErr: ctx.err })
      .showHelpAfterError('(run with --help for usage and examples)');
    cmd.commands.forEach(configure);
  };
  configure(program);
  return program;
}

/** Runs the CLI and returns the exit code (never calls process.exit, so it is testable in-process). */
export async function main(argv: string[] = process.argv, ctx: CliContext = defaultContext()): Promise<number> {
  try {
    await buildProgram(ctx).parseAsync(argv);
    return 0;
  } catch (e) {
    // Commander already printed its message (or the help); map its codes: 0 stays 0, others are usage errors.
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    if (e instanceof UsageError) {
      ctx.err(`error: ${e.message}\n`);
      return 2;
    }
    ctx.err(`error: ${e instanceof Error ? e.message : String(e)}\n`);
    if (ctx.env.GATEHOUSE_DEBUG && e instanceof Error) ctx.err(`${e.stack}\n`);
    return 1;
  }
}

// Run when executed directly (`tsx src/cli/main.ts`, `npm run gatehouse`); bin/gatehouse.js calls main() itself.
const entry = process.argv[1] ? realpathSafe(process.argv[1]) : '';
if (entry === fileURLToPath(import.meta.url)) process.exitCode = await main();

function realpathSafe(p: string) {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
