/**
 * `gatehouse apikey …`: create, list and revoke a tenant's API keys, through the same service as
 * `POST|GET|DELETE /v1/tenants/{tenantId}/api-keys` (audit records included).
 *
 * The CLI acts as the platform operator (the system context, like seeding and jobs): whoever can
 * reach the table is already above every tenant, so the API's caller rule (a key holds nothing its
 * creator does not) does not apply; platform-only roles (`platform-admin`) are still refused.
 */
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { readEnv } from '../config.ts';
import { systemContext, type RequestContext } from '../context.ts';
import { isGatehouseError } from '../errors.ts';
import { API_KEY_PREFIX, createApiKeyService, type ApiKey } from '../auth/apikeys.ts';
import { keys } from '../store/keys.ts';
import { Store } from '../store/store.ts';
import { loadHierarchy } from '../tenancy/hierarchy.ts';
import type { Hierarchy } from '../tenancy/model.ts';
import { targetOptions, UsageError, withTable, type CliContext, type TableTarget, type TargetOptions } from './context.ts';

interface Common extends TargetOptions {
  tenant: string;
  hierarchy?: string;
  json?: boolean;
}

/** The operator's audit context: actor `system`, a request id that names the CLI. */
const cliContext = (): RequestContext => ({ ...systemContext(`cli-${randomUUID()}`), userAgent: 'gatehouse-cli' });

/** The flag a service field came from, for usage errors. */
const FLAGS: Record<string, string> = { name: '--name', roleId: '--role', expiresAt: '--expires-at' };

/** `gh_<id>` (the prefix shown in listings) or the bare id. */
const keyIdOf = (s: string) => (s.startsWith(`${API_KEY_PREFIX}_`) ? s.slice(API_KEY_PREFIX.length + 1) : s);

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd()).join('\n');
}

export function registerApiKeyCommands(program: Command, ctx: CliContext) {
  const apikey = program
    .command('apikey')
    .description("create, list or revoke a tenant's API keys (as the platform operator)")
    .addHelpText(
      'after',
      `
The CLI acts as the platform operator: it may give a key any role of the tenant or any global role
except platform-admin. (Over the API, a caller can only mint a key whose role grants nothing the
caller does not hold.) Every change is in the tenant's audit trail, by actor "system".

Examples:
  $ gatehouse apikey create --tenant 01J8Z0E2Z8D2A3J7A7Y2H9GQ9C --role tenant-auditor --name billing-sync
  $ gatehouse apikey create --tenant 01J8Z0E2Z8D2A3J7A7Y2H9GQ9C --role tenant-admin --name ci --json | jq -r .secret
  $ gatehouse apikey list --tenant 01J8Z0E2Z8D2A3J7A7Y2H9GQ9C
  $ gatehouse apikey revoke --tenant 01J8Z0E2Z8D2A3J7A7Y2H9GQ9C gh_01JB2ZCN9Q8M4X1T5V7W3Y6Z0A`,
    );

  /** Opens the table and the API-key service, and turns the service's errors into what to do. */
  async function withKeys<T>(opts: Common, fn: (s: ReturnType<typeof createApiKeyService>, t: TableTarget & { store: Store; hierarchy: Hierarchy }) => Promise<T>): Promise<T> {
    const env = readEnv(ctx.env);
    const hierarchy = loadHierarchy(opts.hierarchy ?? env.GATEHOUSE_HIERARCHY);
    return withTable(ctx, opts, async (t) => {
      const store = new Store({ doc: t.doc, tableName: t.tableName, cursorSecret: env.GATEHOUSE_CURSOR_SECRET });
      try {
        return await fn(createApiKeyService({ store, hierarchy }), { ...t, store, hierarchy });
      } catch (e) {
        if (e instanceof Error && e.name === 'ResourceNotFoundException') {
          throw new Error(`table ${t.tableName} does not exist at ${t.where} — create it with \`gatehouse table create --table ${t.tableName}\`, or pick another with --table`, { cause: e });
        }
        if (isGatehouseError(e, 'VALIDATION')) {
          const field = e.details.errors?.[0]?.field;
          throw new UsageError(`${field && FLAGS[field] ? `${FLAGS[field]}: ${e.details.errors![0].message}` : e.message}`);
        }
        throw e;
      }
    });
  }

  const tenantMissing = (tenantId: string, tableName: string) =>
    new Error(`no tenant ${tenantId} in table ${tableName} — check the id (GET /v1/tenants lists them), --table and --hierarchy`);

  targetOptions(
    apikey
      .command('create')
      .description('create an API key bound to a tenant and a role; prints the secret ONCE')
      .requiredOption('--tenant <id>', 'the tenant the key acts for (it can never reach another)')
      .requiredOption('--role <roleId>', 'a role of the tenant or a global role (tenant-admin, tenant-auditor, …), not platform-admin')
      .requiredOption('--name <name>', 'what the key is for (1-100 characters), shown in listings and audit')
      .option('--expires-at <date>', 'ISO date-time after which the key is refused (default: never)')
      .option('--hierarchy <name>', 'hierarchy name or file (default: $GATEHOUSE_HIERARCHY, else facilities)')
      .option('--json', 'print the key and its secret as JSON (the warning goes to stderr)'),
  )
    .addHelpText('after', `
The secret is printed once and cannot be shown again: only its SHA-256 is stored. Send it as
"Authorization: Bearer <secret>". Lost it? Revoke the key and create another.

Examples:
  $ gatehouse apikey create --tenant 01J8Z0E2Z8D2A3J7A7Y2H9GQ9C --role tenant-auditor --name billing-sync
  $ KEY=$(gatehouse apikey create --tenant 01J8Z0E2Z8D2A3J7A7Y2H9GQ9C --role tenant-admin --name ci --json | jq -r .secret)`)
    .action(async (opts: Common & { role: string; name: string; expiresAt?: string }) => {
      if (opts.expiresAt !== undefined && Number.isNaN(Date.parse(opts.expiresAt))) throw new UsageError('--expires-at must be an ISO date-time, e.g. 2026-01-31T00:00:00Z');
      await withKeys(opts, async (service, t) => {
        let created;
        try {
          created = await service.create(cliContext(), opts.tenant, { name: opts.name, roleId: opts.role, ...(opts.expiresAt ? { expiresAt: opts.expiresAt } : {}) });
        } catch (e) {
          if (isGatehouseError(e, 'NOT_FOUND')) {
            if (e.details.errors?.[0]?.field === 'roleId') {
              throw new Error(
                `no role ${opts.role} in tenant ${opts.tenant} — use a role of this tenant (GET /v1/tenants/${opts.tenant}/roles) or a global one (tenant-admin, tenant-auditor, admin); on a new table, start the service once to create the built-in roles`,
                { cause: e },
              );
            }
            throw tenantMissing(opts.tenant, t.tableName);
          }
          throw e;
        }
        const { apiKey, secret } = created;
        const warning = 'This is the only time the secret is shown: it cannot be shown again (only its hash is stored). Store it now; if it is lost, revoke the key and create another.';
        if (opts.json) {
          ctx.out(`${JSON.stringify({ ...apiKey, secret }, null, 2)}\n`);
          ctx.err(`warning: ${warning}\n`);
          return;
        }
        ctx.out(`created API key ${apiKey.prefix} "${apiKey.name}" with role ${apiKey.roleId} in tenant ${apiKey.tenantId}${apiKey.expiresAt ? `, expires ${apiKey.expiresAt}` : ''}\n\n`);
        ctx.out(`  ${secret}\n\n`);
        ctx.out(`${warning}\nSend it as: Authorization: Bearer <secret>\n`);
      });
    });

  targetOptions(
    apikey
      .command('list')
      .description("list a tenant's API keys, active and revoked (never their secrets or hashes)")
      .requiredOption('--tenant <id>', 'the tenant id')
      .option('--hierarchy <name>', 'hierarchy name or file (default: $GATEHOUSE_HIERARCHY, else facilities)')
      .option('--json', 'print the keys as a JSON array'),
  )
    .addHelpText('after', `
Examples:
  $ gatehouse apikey list --tenant 01J8Z0E2Z8D2A3J7A7Y2H9GQ9C
  $ gatehouse apikey list --tenant 01J8Z0E2Z8D2A3J7A7Y2H9GQ9C --json | jq '.[] | select(.status == "active")'`)
    .action(async (opts: Common) => {
      await withKeys(opts, async (service, t) => {
        const [tenant, items] = await Promise.all([
          t.store.get(keys.tenant(t.hierarchy.T, opts.tenant)),
          (async () => {
            const all: ApiKey[] = [];
            let cursor: string | null | undefined;
            do {
              const page = await service.list(opts.tenant, { limit: 100, cursor });
              all.push(...page.items);
              cursor = page.cursor;
            } while (cursor);
            return all;
          })(),
        ]);
        if (!tenant) throw tenantMissing(opts.tenant, t.tableName);
        // The service's view has no secret or hash; say so explicitly by what is printed.
        if (opts.json) return ctx.out(`${JSON.stringify(items, null, 2)}\n`);
        if (!items.length) return ctx.out(`no API keys in tenant ${opts.tenant} — create one with \`gatehouse apikey create --tenant ${opts.tenant} --role <roleId> --name <name>\`\n`);
        const rows = [['PREFIX', 'NAME', 'ROLE', 'STATUS', 'CREATED', 'LAST USED', 'EXPIRES']];
        for (const k of items) {
          rows.push([k.prefix, k.name, k.roleId, k.status === 'revoked' ? `revoked ${k.revokedAt?.slice(0, 10) ?? ''}`.trim() : k.status, k.createdAt.slice(0, 19) + 'Z', k.lastUsedAt ? k.lastUsedAt.slice(0, 19) + 'Z' : '-', k.expiresAt ? k.expiresAt.slice(0, 19) + 'Z' : '-']);
        }
        ctx.out(`${table(rows)}\n`);
      });
    });

  targetOptions(
    apikey
      .command('revoke')
      .description('revoke an API key: the next request with it is refused on every instance')
      .argument('<keyId>', 'the key id or its prefix gh_<id> (see `gatehouse apikey list`)')
      .requiredOption('--tenant <id>', 'the tenant the key belongs to')
      .option('--hierarchy <name>', 'hierarchy name or file (default: $GATEHOUSE_HIERARCHY, else facilities)')
      .option('--json', 'print the revoked key as JSON'),
  )
    .addHelpText('after', `
Revoking twice is harmless. A revoked key stays listed (status revoked) for 90 days.

Examples:
  $ gatehouse apikey revoke --tenant 01J8Z0E2Z8D2A3J7A7Y2H9GQ9C gh_01JB2ZCN9Q8M4X1T5V7W3Y6Z0A`)
    .action(async (keyArg: string, opts: Common) => {
      const id = keyIdOf(keyArg.trim());
      await withKeys(opts, async (service) => {
        let key: ApiKey;
        try {
          key = await service.revoke(cliContext(), opts.tenant, id);
        } catch (e) {
          if (isGatehouseError(e, 'NOT_FOUND')) {
            throw new Error(`no API key ${keyArg} in tenant ${opts.tenant} — \`gatehouse apikey list --tenant ${opts.tenant}\` shows its keys (pass the PREFIX or the id)`, { cause: e });
          }
          throw e;
        }
        if (opts.json) return ctx.out(`${JSON.stringify(key, null, 2)}\n`);
        ctx.out(`revoked API key ${key.prefix} "${key.name}" in tenant ${key.tenantId} (at ${key.revokedAt}): requests with it are refused from now on\n`);
      });
    });
}
