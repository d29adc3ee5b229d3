import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, type TestTable } from '../../test/harness.ts';
import { measure } from '../store/accounting.ts';
import { keys } from '../store/keys.ts';
import type { Store } from '../store/store.ts';
import type { Hierarchy, TenantRecord } from '../tenancy/model.ts';
import { adminCtx, auditOf, facilities, putTenant, putUser, storeOf } from '../entitlements/fixtures.test-util.ts';
import { createSessionService, type SessionService } from './service.ts';

let t: TestTable;
let store: Store;
let h: Hierarchy;
let sessions: SessionService;
let tenant: TenantRecord;
const ctx = adminCtx();
const DAY = 86400_000;

beforeAll(async () => {
  t = await createTestTable();
  store = storeOf(t);
  h = facilities();
  sessions = createSessionService({ store, hierarchy: h, now: () => new Date() });
  tenant = await putTenant(store, h);
});
afterAll(() => t?.drop());

/** The same service on a clock `offsetDays` away (to age items past their TTL). */
const at = (offsetDays: number) => createSessionService({ store, hierarchy: h, now: () => new Date(Date.now() + offsetDays * DAY) });

describe('sessions and tokens (001)', () => {
  it("conformance: a user's sessions and tokens, each one Query of the user's partition (with the revoke marker in the same wave)", async () => {
    const u = await putUser(store, h, tenant.id);
    const s1 = await sessions.createSession(ctx, tenant.id, u.id, { ssoProvider: 'google', ip: '198.51.100.1', mfaVerified: true });
    const s2 = await sessions.createSession(ctx, tenant.id, u.id, {});
    expect(s1.expiresAt - Math.floor(Date.now() / 1000)).toBeGreaterThan(89 * 86400);
    const tok = await sessions.createToken(ctx, tenant.id, u.id, { tokenType: 'refresh', sessionId: s1.id });
    expect(tok.expiresAt - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(30 * 86400);
    expect(tok.secret).toMatch(/^ght_refresh\./);

    const list = await measure('sessions.ofUser', () => sessions.sessions(tenant.id, u.id));
    expect(list.result.items.map((s) => s.id)).toEqual([s2.id, s1.id]);
    expect(list.log.waves).toBe(1);
    expect(list.log.byCommand()).toEqual({ GetItem: 2, Query: 1 });
    const toks = await measure('tokens.ofUser', () => sessions.tokens(tenant.id, u.id));
    expect(toks.result.items.map((x) => x.id)).toEqual([tok.id]);
    expect(toks.result.items[0]).not.toHaveProperty('secretHash');
    expect(toks.result.items[0]).not.toHaveProperty('secret');
    expect(toks.log.waves).toBe(1);
  });

  it('stores only a hash of the secret; verifies it; revocation and expiry make it invalid', async () => {
    const u = await putUser(store, h, tenant.id);
    const tok = await sessions.createToken(ctx, tenant.id, u.id, { tokenType: 'api', name: 'ci' });
    const stored = await store.get<Record<string, unknown>>(keys.token(u.id, tok.id));
    expect(JSON.stringify(stored)).not.toContain(tok.secret.split('.').at(-1)!);
    expect(stored!.secretHash).toMatch(/^[0-9a-f]{64}$/);
    expect((await sessions.verifyToken(tok.secret)).id).toBe(tok.id);
    await expect(sessions.verifyToken(tok.secret.slice(0, -2) + 'xx')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    // The audit record of the creation holds no secret either.
    const rec = (await auditOf(store, h.T, tenant.id)).find((r) => r.entityId === tok.id)!;
    expect(JSON.stringify(rec)).not.toContain(tok.secret);
    // 31 days later it has expired, even though TTL has not deleted it.
    await expect(at(31).verifyToken(tok.secret)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect((await at(31).tokens(tenant.id, u.id)).items).toEqual([]);
    await sessions.revokeToken(ctx, tenant.id, u.id, tok.id);
    await expect(sessions.verifyToken(tok.secret)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    await expect(sessions.revokeToken(ctx, tenant.id, u.id, tok.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(sessions.createToken(ctx, tenant.id, u.id, { tokenType: 'api', ttlDays: 31 })).rejects.toMatchObject({ details: { errors: [{ field: 'ttlDays' }] } });
  });

  it('an expired session that TTL has not deleted yet is treated as gone', async () => {
    const u = await putUser(store, h, tenant.id);
    const old = await at(-91).createSession(ctx, tenant.id, u.id, {});
    const fresh = await sessions.createSession(ctx, tenant.id, u.id, {});
    expect(await store.get(keys.session(u.id, old.sessionStart, old.id))).toBeDefined();
    expect((await sessions.sessions(tenant.id, u.id)).items.map((s) => s.id)).toEqual([fresh.id]);
    await expect(sessions.getSession(tenant.id, u.id, old.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(sessions.revokeSession(ctx, tenant.id, u.id, old.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('revokes one session, then all of them (and refresh tokens, not API tokens) in one write', async () => {
    const u = await putUser(store, h, tenant.id);
    const ss = [];
    for (let i = 0; i < 5; i++) ss.push(await sessions.createSession(ctx, tenant.id, u.id, {}));
    const refresh = await sessions.createToken(ctx, tenant.id, u.id, { tokenType: 'refresh' });
    const api = await sessions.createToken(ctx, tenant.id, u.id, { tokenType: 'api' });
    await sessions.revokeSession(ctx, tenant.id, u.id, ss[0].id);
    expect((await sessions.sessions(tenant.id, u.id)).items).toHaveLength(4);
    const { log } = await measure('sessions.revokeAll', () => sessions.revokeAll(ctx, tenant.id, u.id));
    expect(log.byCommand()).toEqual({ TransactWriteItems: 1 });
    expect((await sessions.sessions(tenant.id, u.id)).items).toEqual([]);
    await expect(sessions.verifyToken(refresh.secret)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect((await sessions.verifyToken(api.secret)).id).toBe(api.id);
    // A session started afterwards is live.
    await new Promise((r) => setTimeout(r, 5));
    const next = await sessions.createSession(ctx, tenant.id, u.id, {});
    expect((await sessions.sessions(tenant.id, u.id)).items.map((s) => s.id)).toEqual([next.id]);
    const actions = (await auditOf(store, h.T, tenant.id)).filter((r) => r.related && (r.related as { userId?: string }).userId === u.id || r.entityId === u.id).map((r) => r.action);
    expect(actions).toContain('session.revoke_all');
  });

  it("keeps tenants apart: another tenant's user is not found", async () => {
    const other = await putTenant(store, h);
    const u = await putUser(store, h, other.id);
    await expect(sessions.createSession(ctx, tenant.id, u.id, {})).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(sessions.sessions(tenant.id, u.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(sessions.revokeAll(ctx, tenant.id, u.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
