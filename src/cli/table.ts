/** `gatehouse table …`: print the CloudFormation template, create and describe the table. */
import type { Command } from 'commander';
import { tableTemplateYaml } from '../store/table.ts';
import { describeTable, ensureTable, formatTableSummary } from '../store/admin.ts';
import { targetOptions, withTable, type CliContext, type TargetOptions } from './context.ts';

export function registerTableCommands(program: Command, ctx: CliContext) {
  const table = program
    .command('table')
    .description('create, describe, or get the CloudFormation template of the Gatehouse DynamoDB table')
    .addHelpText(
      'after',
      `
Examples:
  $ gatehouse table template > table.yaml          # deploy with: aws cloudformation deploy --template-file table.yaml --stack-name gatehouse-table
  $ AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8000 gatehouse table create
  $ gatehouse table describe --table app_data --json`,
    );

  table
    .command('template')
    .description('print the CloudFormation (YAML) template of the table, derived from the same definition the code uses')
    .option('-n, --table-name <name>', 'set TableName (default: none, CloudFormation generates one)')
    .action((opts: { tableName?: string }) => {
      ctx.out(tableTemplateYaml(opts.tableName));
    });

  targetOptions(
    table
      .command('create')
      .description('create the table if it does not exist (PK/SK, GSI1-GSI5, TTL on expiresAt, on-demand); safe to re-run'),
  ).action(async (opts: TargetOptions) => {
    await withTable(ctx, opts, async ({ raw, tableName, where }) => {
      const { created } = await ensureTable(raw, tableName);
      ctx.out(created ? `created table ${tableName} at ${where}\n` : `table ${tableName} already exists at ${where} (layout checked, TTL on)\n`);
    });
  });

  targetOptions(
    table
      .command('describe')
      .description('show status, approximate item count, keys, indexes and TTL of the table')
      .option('--json', 'print JSON instead of text'),
  ).action(async (opts: TargetOptions & { json?: boolean }) => {
    await withTable(ctx, opts, async ({ raw, tableName, where }) => {
      const summary = await describeTable(raw, tableName);
      ctx.out(opts.json ? `${JSON.stringify({ endpoint: where, ...summary }, null, 2)}\n` : `endpoint    ${where}\n${formatTableSummary(summary)}\n`);
    });
  });
}
