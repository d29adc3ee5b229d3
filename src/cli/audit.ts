/** `gatehouse audit …`: read and export a tenant's audit trail. */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Command } from 'commander';
import { readEnv } from '../config.ts';
import { Store } from '../store/store.ts';
import { loadHierarchy } from '../tenancy/hierarchy.ts';
import { createAuditService } from '../audit/service.ts';
import { AUDIT_TTL_SECONDS } from '../audit/record.ts';
import { toCsvHeader, toCsvRow, toJsonLine } from '../audit/export.ts';
import { targetOptions, UsageError, withTable, type CliContext, type TargetOptions } from './context.ts';
import { progressLine } from './jobs.ts';

interface ExportOptions extends TargetOptions {
  tenant: string;
  from?: string;
  to?: string;
  format: string;
  out?: string;
  hierarchy?: string;
  progress: boolean;
}

export function registerAuditCommands(program: Command, ctx: CliContext) {
  const audit = program.command('audit').description("read or export a tenant's audit trail");
  targetOptions(
    audit
      .command('export')
      .description("export a tenant's audit records in a date range, newest first, as JSON Lines or CSV")
      .requiredOption('--tenant <id>', 'the tenant id')
      .option('--from <date>', 'ISO date or date-time (default: a year ago, the TTL)')
      .option('--to <date>', 'ISO date or date-time; a date covers its whole day (default: now)')
      .option('-f, --format <format>', 'jsonl or csv', 'jsonl')
      .option('-o, --out <file>', 'write to a file instead of stdout')
      .option('--hierarchy <name>', 'hierarchy name or file (default: $GATEHOUSE_HIERARCHY, else facilities)')
      .option('--no-progress', 'do not draw a progress bar on stderr'),
  )
    .addHelpText('after', `
Examples:
  $ gatehouse audit export --tenant 01J8Z0E2Z8D2A3J7A7Y2H9GQ9C --from 2025-01-01 --to 2025-01-31 -o jan.jsonl
  $ gatehouse audit export --tenant 01J8Z0E2Z8D2A3J7A7Y2H9GQ9C --format csv > audit.csv`)
    .action(async (opts: ExportOptions) => {
      if (opts.format !== 'jsonl' && opts.format !== 'csv') throw new UsageError(`--format must be jsonl or csv, not "${opts.format}"`);
      for (const f of ['from', 'to'] as const) if (opts[f] && Number.isNaN(Date.parse(opts[f]!))) throw new UsageError(`--${f} must be an ISO date or date-time`);
      const env = readEnv(ctx.env);
      const hierarchy = loadHierarchy(opts.hierarchy ?? env.GATEHOUSE_HIERARCHY);
      await withTable(ctx, opts, async ({ doc, tableName }) => {
        const store = new Store({ doc, tableName, cursorSecret: env.GATEHOUSE_CURSOR_SECRET });
        const service = createAuditService({ store, hierarchy });
        const file = opts.out ? createWriteStream(opts.out) : undefined;
        const write = async (s: string) => {
          if (!file) return ctx.out(s);
          if (!file.write(s)) await once(file, 'drain');
        };
        // Progress is the share of the time range covered so far (records come newest first).
        const toMs = opts.to ? Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(opts.to) ? `${opts.to}T23:59:59.999Z` : opts.to) : Date.now();
        const fromMs = opts.from ? Date.parse(opts.from) : Date.now() - AUDIT_TTL_SECONDS * 1000;
        let count = 0;
        let drawn = 0;
        if (opts.format === 'csv') await write(toCsvHeader());
        for await (const r of service.stream(opts.tenant, { from: opts.from, to: opts.to })) {
          await write(opts.format === 'csv' ? toCsvRow(r) : toJsonLine(r));
          count++;
          if (opts.progress && Date.now() - drawn > 100) {
            drawn = Date.now();
            ctx.err(progressLine(toMs - Date.parse(r.at), toMs - fromMs, `${count} records, at ${r.at}`));
          }
        }
        if (opts.progress) ctx.err(`${progressLine(1, 1, `${count} records`)}\n`);
        if (file) {
          file.end();
          await once(file, 'finish');
        }
      });
    });

  targetOptions(
    audit
      .command('list')
      .description("print one page of a tenant's audit records, newest first")
      .requiredOption('--tenant <id>', 'the tenant id')
      .option('--from <date>', 'ISO date or date-time')
      .option('--to <date>', 'ISO date or date-time')
      .option('-n, --limit <n>', 'records per page (1-100)', '25')
      .option('--cursor <cursor>', 'the cursor printed by the previous page')
      .option('--hierarchy <name>', 'hierarchy name or file'),
  ).action(async (opts: TargetOptions & { tenant: string; from?: string; to?: string; limit: string; cursor?: string; hierarchy?: string }) => {
    const limit = Number(opts.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError('--limit must be a whole number from 1 to 100');
    const env = readEnv(ctx.env);
    const hierarchy = loadHierarchy(opts.hierarchy ?? env.GATEHOUSE_HIERARCHY);
    await withTable(ctx, opts, async ({ doc, tableName }) => {
      const store = new Store({ doc, tableName, cursorSecret: env.GATEHOUSE_CURSOR_SECRET });
      const page = await createAuditService({ store, hierarchy }).range(opts.tenant, { from: opts.from, to: opts.to, limit, cursor: opts.cursor });
      for (const r of page.items) ctx.out(`${r.at}  ${r.actorId.padEnd(26)}  ${r.action.padEnd(24)}  ${r.entityType} ${r.entityId}\n`);
      if (page.cursor) {
        // Cursors are signed: without a fixed secret each run signs with a new one.
        ctx.out(`next page: --cursor ${page.cursor}${env.GATEHOUSE_CURSOR_SECRET ? '' : '  (set GATEHOUSE_CURSOR_SECRET for cursors to work across runs)'}\n`);
      }
    });
  });
}
