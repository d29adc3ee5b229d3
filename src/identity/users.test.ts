/**
 * Users: the uniqueness race, secrets at rest (scrypt hash, AES-GCM-encrypted MFA secret) that
 * never reach a response, an audit record or a log line, and the user lifecycle rules.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatehouseError } from '../errors.ts';
import { createLogger } from '../http/logger.ts';
import type { Store } from '../store/store.ts';
import { IdentityRepository } from './repository.ts';
import { withKid } from './secrets.ts';
import { UserService } from './service.ts';
import { keys } from '../store/keys.ts';
import type { Item } from '../store/store.ts';
import { createKit, type Kit } from '../tenancy/kit.test-util.ts';

let k: Kit;
let tenantId: string;
const lines: string[] = [];
const PASSWORD = 'correct horse battery staple';
const MFA = 'JBSWY3DPEHPK3PXP';

beforeAll(async () => {
  const logger = createLogger('debug', new Writable({ write(chunk, _e, done) { lines.push(String(chunk)); done(); } }));
  k = await createKit('facilities', { logger });
  tenantId = (await k.req('POST', '/v1/tenants', { name: 'Secrets Inc' })).body.id;
});
afterAll(() => k?.t.drop());

const auditRecords = async () =>
  (await Promise.all(Array.from({ length: 16 }, (_, i) => k.partition(keys.auditShard('CLIENT', tenantId, i).pk)))).flat();

describe('uniqueness under concurrency', () => {
  it('50 concurrent creates with the same e-mail: exactly one 201, 49 × 409 naming email', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => k.req('POST', `/v1/tenants/${tenantId}/users`, { email: 'Race@Example.com', firstName: `Racer ${i}` })),
    );
    const created = results.filter((r) => r.status === 201);
    const conflicts = results.filter((r) => r.status === 409);
    expect(created).toHaveLength(1);
    expect(conflicts).toHaveLength(49);
    for (const r of conflicts) expect(r.body).toMatchObject({ code: 'CONFLICT', errors: [{ field: 'email' }] });
    const winner = created[0].body.id;
    expect(await k.get(keys.email('race@example.com'))).toMatchObject({ userId: winner });
    const users = await k.store.queryAll<Item>({ index: 'GSI1', pk: `CLIENT#${tenantId}`, sk: { beginsWith: 'USER#' } });
    expect(users.filter((u) => u.email === 'race@example.com').map((u) => u.id)).toEqual([winner]);
  });
});

describe('conflict vs retryable classification', () => {
  it('a write that exhausted its retries is a 409 naming the field when the guard is now taken, else stays RETRYABLE', async () => {
    // A store view whose transactions always lose to concurrent writers (DynamoDB Local rarely does).
    const busy = Object.create(k.store, {
      transactWrite: { value: async () => { throw new GatehouseError('RETRYABLE', 'The write conflicted with concurrent writes; retry it'); } },
    }) as Store;
    const users = new UserService(new IdentityRepository(busy, k.h), k.h, { dataKey: withKid(Buffer.alloc(32, 3)) });
    await k.req('POST', `/v1/tenants/${tenantId}/users`, { email: 'taken@example.com', username: 'taken' });
    await expect(users.create(k.ctx, tenantId, { email: 'taken@example.com' })).rejects.toMatchObject({ code: 'CONFLICT', details: { errors: [{ field: 'email' }] } });
    await expect(users.create(k.ctx, tenantId, { email: 'free@example.com', username: 'TAKEN' })).rejects.toMatchObject({ code: 'CONFLICT', details: { errors: [{ field: 'username' }] } });
    await expect(users.create(k.ctx, tenantId, { email: 'free@example.com' })).rejects.toMatchObject({ code: 'RETRYABLE' });
  });
});

describe('secrets at rest', () => {
  it('a password is stored only as a scrypt hash with its parameters, and checked in constant time', async () => {
    const res = await k.req('POST', `/v1/tenants/${tenantId}/users`, { email: 'pw@example.com', password: PASSWORD, mfaSecret: MFA, mfaType: 'totp' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ hasPassword: true, mfaEnabled: true, mfaType: 'totp' });
    const item = (await k.get(keys.user(res.body.id)))!;
    expect(item.passwordHash).toMatch(/^scrypt\$N=16384,r=8,p=1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{86}$/);
    expect(JSON.stringify(item)).not.toContain(PASSWORD);
    expect(await k.identity.users.verifyPassword(res.body.id, PASSWORD)).toBe(true);
    expect(await k.identity.users.verifyPassword(res.body.id, 'wrong password')).toBe(false);
    // A new password: a new salt and hash.
    const set = await k.req('PUT', `/v1/tenants/${tenantId}/users/${res.body.id}/password`, { password: 'another long password' });
    expect(set.status).toBe(204);
    const after = (await k.get(keys.user(res.body.id)))!;
    expect(after.passwordHash).not.toBe(item.passwordHash);
    expect(await k.identity.users.verifyPassword(res.body.id, 'another long password')).toBe(true);
    expect(await k.identity.users.verifyPassword(res.body.id, PASSWORD)).toBe(false);
  });

  it('an MFA secret is stored only encrypted (AES-256-GCM, bound to the user) and can be erased', async () => {
    const u = (await k.identity.users.getByEmail('pw@example.com'))!;
    const item = (await k.get(keys.user(u.id)))!;
    expect(item.mfaSecret).toMatch(/^v1\.[0-9a-f]{8}\./);
    expect(JSON.stringify(item)).not.toContain(MFA);
    expect(await k.identity.users.mfaSecret(u.id)).toBe(MFA);
    const put = await k.req('PUT', `/v1/tenants/${tenantId}/users/${u.id}/mfa`, { type: 'totp', secret: 'NEWSECRETNEWSECRET' });
    expect(put.status).toBe(200);
    expect(await k.identity.users.mfaSecret(u.id)).toBe('NEWSECRETNEWSECRET');
    const del = await k.req('DELETE', `/v1/tenants/${tenantId}/users/${u.id}/mfa`);
    expect(del.body).toMatchObject({ mfaEnabled: false });
    expect((await k.get(keys.user(u.id)))!.mfaSecret).toBeUndefined();
  });

  it('neither secret appears in any response, audit record or log line', async () => {
    const u = (await k.identity.users.getByEmail('pw@example.com'))!;
    const responses = [
      await k.req('GET', `/v1/tenants/${tenantId}/users/${u.id}`),
      await k.req('GET', `/v1/tenants/${tenantId}/users?email=pw@example.com`),
      await k.req('GET', `/v1/tenants/${tenantId}/users`),
      await k.req('GET', `/v1/tenants/${tenantId}/users/${u.id}/overview`),
      await k.req('PATCH', `/v1/tenants/${tenantId}/users/${u.id}`, { title: 'Keeper' }, { 'if-match': `"${u.version}"` }),
    ];
    const stored = (await k.get(keys.user(u.id)))!;
    for (const r of responses) {
      const text = JSON.stringify(r.body);
      expect(r.status).toBe(200);
      for (const secret of [PASSWORD, MFA, String(stored.passwordHash), 'passwordHash', 'mfaSecret']) expect(text).not.toContain(secret);
    }
    const audits = JSON.stringify(await auditRecords());
    expect(audits).toContain('user.password.set');
    for (const secret of [PASSWORD, MFA, 'NEWSECRETNEWSECRET', 'another long password', String(stored.passwordHash), 'scrypt$']) expect(audits).not.toContain(secret);
    const log = lines.join('');
    expect(log).toContain('"path"');
    for (const secret of [PASSWORD, MFA, 'NEWSECRETNEWSECRET', 'another long password', 'scrypt$']) expect(log).not.toContain(secret);
  });
});

describe('lifecycle', () => {
  it('a user with memberships cannot be deleted (409); without, it goes with its guards and its stamp moves', async () => {
    const u = (await k.req('POST', `/v1/tenants/${tenantId}/users`, { email: 'life@example.com', phone: '+15551230000' })).body;
    const p = (await k.req('POST', `/v1/tenants/${tenantId}/scopes`, { kind: 'project', name: 'Life' })).body;
    await k.identity.memberships.add(k.ctx, tenantId, { kind: 'project', id: p.id }, u.id);
    const refused = await k.req('DELETE', `/v1/tenants/${tenantId}/users/${u.id}`, undefined, { 'if-match': '"1"' });
    expect(refused.status).toBe(409);
    expect(refused.body.errors[0].field).toBe('memberships');
    await k.identity.memberships.remove(k.ctx, tenantId, { kind: 'project', id: p.id }, u.id);
    const stampBefore = Number((await k.get(keys.userStamp(u.id)))?.stamp ?? 0);
    expect((await k.req('DELETE', `/v1/tenants/${tenantId}/users/${u.id}`, undefined, { 'if-match': '"1"' })).status).toBe(204);
    expect(await k.get(keys.user(u.id))).toBeUndefined();
    expect(await k.get(keys.email('life@example.com'))).toBeUndefined();
    expect(await k.get(keys.phone('+15551230000'))).toBeUndefined();
    expect(Number((await k.get(keys.userStamp(u.id)))?.stamp)).toBe(stampBefore + 1);
    // The e-mail is free again.
    expect((await k.req('POST', `/v1/tenants/${tenantId}/users`, { email: 'life@example.com' })).status).toBe(201);
  });

  it('users of a tenant by status (GSI1 + filter) and end date open-ended by null', async () => {
    const u = (await k.req('POST', `/v1/tenants/${tenantId}/users`, { email: 'off@example.com', status: 'disabled', endDate: '2027-01-01' })).body;
    const disabled = await k.req('GET', `/v1/tenants/${tenantId}/users?status=disabled`);
    expect(disabled.body.items.map((x: { id: string }) => x.id)).toEqual([u.id]);
    const p = await k.req('PATCH', `/v1/tenants/${tenantId}/users/${u.id}`, { endDate: null, status: 'active' }, { 'if-match': '"1"' });
    expect(p.body.endDate).toBeUndefined();
    expect(await k.get(keys.user(u.id))).toMatchObject({ GSI3SK: `9999-12-31#${u.id}`, GSI3PK: expect.stringMatching(/^USER#STATUS#active#/) });
  });
});
