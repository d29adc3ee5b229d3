/** `gatehouse jobs …`: scheduled work run by hand (or by cron). */
import type { Command } from 'commander';
import { readEnv } from '../config.ts';
import { Store } from '../store/store.ts';
import { loadHierarchy } from '../tenancy/hierarchy.ts';
import { runLicenseExpiry } from '../notifications/expiry.ts';
import { createOutboxMailer, createSesMailer } from '../notifications/transport.ts';
import { targetOptions, UsageError, withTable, type CliContext, type TargetOptions } from './context.ts';

/** `[#####.....]  45%  9/20 label`, redrawn in place on stderr. */
export function progressLine(done: number, total: number, label = '', width = 24): string {
  const f = total > 0 ? Math.min(1, done / total) : 1;
  const full = Math.round(f * width);
  return `\r[${'#'.repeat(full)}${'.'.repeat(width - full)}] ${String(Math.round(f * 100)).padStart(3)}%  ${label}`;
}

export function registerJobsCommands(program: Command, ctx: CliContext) {
  const jobs = program.command('jobs').description('run scheduled jobs (license expiry notices)');
  targetOptions(
    jobs
      .command('license-expiry')
      .description('e-mail tenant admins about active licenses ending within the window, once per license, threshold and admin; flip ended licenses to expired')
      .requiredOption('-w, --within <window>', 'the window, e.g. 30d, 12h, 2w')
      .option('--threshold <label>', 'notice threshold the once-only guard is keyed by (default: the window)')
      .option('--transport <name>', 'ses or outbox (default: $GATEHOUSE_MAIL_TRANSPORT, else ses in production, outbox otherwise)')
      .option('--from <email>', 'From address (default: $GATEHOUSE_MAIL_FROM)')
      .option('--hierarchy <name>', 'hierarchy name or file (default: $GATEHOUSE_HIERARCHY, else facilities)')
      .option('--dry-run', 'show what would be sent; write and send nothing')
      .option('--json', 'print the summary as JSON')
      .option('--no-progress', 'do not draw a progress bar on stderr'),
  )
    .addHelpText('after', `
Every attempt is recorded in the notification audit (GET /v1/notifications): sent, failed or skipped.
Re-running never sends the same notice twice; a failed send is retried on the next run.

Examples:
  $ gatehouse jobs license-expiry --within 30d
  $ gatehouse jobs license-expiry --within 7d --transport ses --from licenses@example.com
  $ gatehouse jobs license-expiry --within 30d --dry-run --json`)
    .action(async (opts: TargetOptions & { within: string; threshold?: string; transport?: string; from?: string; hierarchy?: string; dryRun?: boolean; json?: boolean; progress: boolean }) => {
      const env = readEnv(ctx.env);
      const transport = opts.transport ?? ctx.env.GATEHOUSE_MAIL_TRANSPORT ?? (env.NODE_ENV === 'production' ? 'ses' : 'outbox');
      if (transport !== 'ses' && transport !== 'outbox') throw new UsageError(`--transport must be ses or outbox, not "${transport}"`);
      if (!/^\d+(\.\d+)?[dhw]$/i.test(opts.within.trim())) throw new UsageError(`--within must look like 30d, 12h or 2w, not "${opts.within}"`);
      const hierarchy = loadHierarchy(opts.hierarchy ?? env.GATEHOUSE_HIERARCHY);
      await withTable(ctx, opts, async ({ doc, tableName }) => {
        const store = new Store({ doc, tableName, cursorSecret: env.GATEHOUSE_CURSOR_SECRET });
        const mailer = transport === 'ses' ? createSesMailer({ region: env.AWS_REGION }) : createOutboxMailer(store);
        const summary = await runLicenseExpiry(
          { store, hierarchy, now: () => new Date(), mailer, sender: opts.from ?? ctx.env.GATEHOUSE_MAIL_FROM },
          { within: opts.within, threshold: opts.threshold, dryRun: opts.dryRun, onProgress: opts.progress ? (d, n) => ctx.err(progressLine(d, n, `${d}/${n} licenses`)) : undefined },
        );
        if (opts.progress && summary.notices.length) ctx.err('\n');
        if (opts.json) {
          ctx.out(`${JSON.stringify(summary, null, 2)}\n`);
          return;
        }
        ctx.out(`license-expiry ${opts.dryRun ? '(dry run) ' : ''}window ${summary.now} → ${summary.horizon}, threshold ${summary.threshold}, transport ${transport}\n`);
        ctx.out(`  licenses found ${summary.licenses}, flipped to expired ${summary.expired.length}\n`);
        ctx.out(`  sent ${summary.sent}, failed ${summary.failed}, skipped ${summary.skipped}${opts.dryRun ? `, would send ${summary.notices.filter((n) => n.status === 'would-send').length}` : ''}\n`);
        for (const n of summary.notices.filter((x) => x.status === 'failed')) ctx.out(`  failed: license ${n.licenseId} → ${n.recipient}: ${n.error}\n`);
      });
    });
}
