/** `gatehouse apikey create|list|revoke`, run in-process against a test table on DynamoDB Local. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { createAccess } from '../access/index.ts';
import { createAuditService } from '../audit/service.ts';
import { createAuth, type Auth } from '../auth/index.ts';
import { parseApiKey } from '../auth/apikeys.ts';
import { systemContext } from '../context.ts';
import { keys } from '../store/keys.ts';
import { Store } from '../store/store.ts';
import { loadHierarchy } from '../tenancy/hierarchy.ts';
import { createTenancy } from '../tenancy/index.ts';
import type { CliContext } from './context.ts';
import { main } from './main.ts';

let t: TestTable;
let store: Store;
let auth: Auth;
let tenantId: string;
const hierarchy = loadHierarchy('facilities');

async function run(args: string[]) {
  let out = '';
  let err = '';
  const c: CliContext = { out: (s) => void (out += s), err: (s) => void (err += s), env: {} };
  const code = await main(['node', 'gatehouse', ...args, '--endpoint', t.endpoint, '--table', t.tableName], c);
  return { code, out, err };
}

beforeAll(async () => {
  t = await createTestTable();
  store = new Store({ doc: t.doc, tableName: t.tableName });
  await createAccess({ store, hierarchy }).bootstrap(systemContext());
  tenantId = (await createTenancy({ store, hierarchy }).tenants.create(systemContext(), { name: 'Cli Keys' })).id;
  auth = await createAuth({ store, hierarchy, config: { rateLimit: false } });
});
afterAll(() => t?.drop());

describe('gatehouse apikey', () => {
  it('create prints the secret once (it authenticates), list never shows it, revoke makes it refused; all audited', async () => {
    const created = await run(['apikey', 'create', '--tenant', tenantId, '--role', 'tenant-auditor', '--name', 'billing-sync']);
    expect(created.code, created.err).toBe(0);
    const secret = /(gh_[0-9A-Z]{26}_[A-Za-z0-9_-]{43})/.exec(created.out)?.[1];
    expect(secret).toBeDefined();
    expect(created.out.split(secret!).length).toBe(2); // printed exactly once
    expect(created.out).toContain('cannot be shown again');
    const { id } = parseApiKey(secret!)!;

    // The printed secret authenticates as a key of this tenant with its role.
    const p = await auth.authenticateCredential(secret!);
    expect(p).toMatchObject({ kind: 'apiKey', roleId: 'tenant-auditor', actor: { id: `gh_${id}`, tenantId } });
    const stored = await store.get<Record<string, unknown>>(keys.apiKey(id));
    expect(stored).toMatchObject({ createdBy: 'system', tenantId, roleId: 'tenant-auditor' });

    const list = await run(['apikey', 'list', '--tenant', tenantId]);
    expect(list.code, list.err).toBe(0);
    expect(list.out).toMatch(new RegExp(`gh_${id}\\s+billing-sync\\s+tenant-auditor\\s+active`));
    const secretPart = parseApiKey(secret!)!.secret;
    for (const out of [list.out, (await run(['apikey', 'list', '--tenant', tenantId, '--json'])).out]) {
      expect(out).not.toContain(secretPart);
      expect(out).not.toContain(String(stored!.secretHash));
      expect(out).not.toMatch(/secret|hash/i);
    }

    const revoked = await run(['apikey', 'revoke', '--tenant', tenantId, `gh_${id}`]);
    expect(revoked.code, revoked.err).toBe(0);
    expect(revoked.out).toContain(`revoked API key gh_${id}`);
    await expect(auth.authenticateCredential(secret!)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    const after = JSON.parse((await run(['apikey', 'list', '--tenant', tenantId, '--json'])).out);
    expect(after).toEqual([expect.objectContaining({ id, status: 'revoked', revokedBy: 'system' })]);
    // Revoking again is harmless; the bare id works too.
    expect((await run(['apikey', 'revoke', '--tenant', tenantId, id])).code).toBe(0);

    const audit = await createAuditService({ store, hierarchy }).range(tenantId, { limit: 100 });
    const actions = audit.items.filter((r) => r.entityId === id).map((r) => `${r.action} by ${r.actorId}`);
    expect(actions.sort()).toEqual(['apikey.create by system', 'apikey.revoke by system']);
  });

  it('--json prints the key with its secret on stdout and the warning on stderr', async () => {
    const r = await run(['apikey', 'create', '--tenant', tenantId, '--role', 'tenant-admin', '--name', 'ci', '--json', '--expires-at', new Date(Date.now() + 86_400_000).toISOString()]);
    expect(r.code, r.err).toBe(0);
    const k = JSON.parse(r.out);
    expect(k).toMatchObject({ tenantId, roleId: 'tenant-admin', name: 'ci', status: 'active', prefix: `gh_${k.id}` });
    expect(k.secretHash).toBeUndefined();
    expect(r.err).toContain('cannot be shown again');
    expect((await auth.authenticateCredential(k.secret)).roleId).toBe('tenant-admin');
  });

  it('refuses platform-only roles and bad input (exit 2), and says what to do when something is missing (exit 1)', async () => {
    const platform = await run(['apikey', 'create', '--tenant', tenantId, '--role', 'platform-admin', '--name', 'x']);
    expect(platform.code).toBe(2);
    expect(platform.err).toContain('--role: A tenant API key cannot hold a platform role');
    expect((await run(['apikey', 'create', '--tenant', tenantId, '--role', 'tenant-admin', '--name', '   '])).code).toBe(2);
    expect((await run(['apikey', 'create', '--tenant', tenantId, '--role', 'tenant-admin', '--name', 'x', '--expires-at', 'soon'])).code).toBe(2);
    expect((await run(['apikey', 'create', '--tenant', tenantId, '--name', 'x'])).code).toBe(2); // --role missing
    expect((await run(['apikey', 'revoke', '--tenant', tenantId])).code).toBe(2); // <keyId> missing

    const noRole = await run(['apikey', 'create', '--tenant', tenantId, '--role', 'nope', '--name', 'x']);
    expect(noRole.code).toBe(1);
    expect(noRole.err).toContain('no role nope in tenant');
    const noTenant = await run(['apikey', 'list', '--tenant', 'NOPE']);
    expect(noTenant.code).toBe(1);
    expect(noTenant.err).toContain('no tenant NOPE');
    const noKey = await run(['apikey', 'revoke', '--tenant', tenantId, 'gh_01JB2ZCN9Q8M4X1T5V7W3Y6Z0A']);
    expect(noKey.code).toBe(1);
    expect(noKey.err).toContain(`gatehouse apikey list --tenant ${tenantId}`);
    // Nothing was written by the refused creates.
    const keysNow = JSON.parse((await run(['apikey', 'list', '--tenant', tenantId, '--json'])).out) as { name: string }[];
    expect(keysNow.map((k) => k.name).sort()).toEqual(['billing-sync', 'ci']);
  });

  it('has help with examples', async () => {
    const r = await run(['apikey', 'create', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('cannot be shown again');
    expect(r.out).toContain('Examples:');
    expect((await run(['apikey', '--help'])).out).toContain('platform operator');
  });
});
