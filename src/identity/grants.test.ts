/**
 * Tenant grants (003) naming a user of another tenant: the caller must prove it knows whom it adds
 * (the user's e-mail in the body), or a user id learnt anywhere would turn into that person's
 * e-mail and name through the grant's answer and the tenant's member list. A missing or wrong
 * e-mail and an unknown id are one and the same 404 naming `userId`, and nothing is written.
 * GET / DELETE of the grant of a user who is not a member are 404 as well.
 */
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../store/keys.ts';
import { createKit, type Kit } from '../tenancy/kit.test-util.ts';

let k: Kit;
/** The tenant that adds members. */
let A: string;
/** Another tenant, home of the users A tries to add. */
let B: string;

const T = 'CLIENT';
const ROLE = ulid();
const members = (tid: string, uid: string) => `/v1/tenants/${tid}/members/${uid}`;

async function user(tenantId: string, email: string): Promise<string> {
  const r = await k.req('POST', `/v1/tenants/${tenantId}/users`, { email, firstName: 'Private', lastName: 'Person' });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}

/** Everything a grant of `userId` into A could touch: A's partition (grant edges), the user's partition (edges, stamp), A's audit shards. */
async function tableState(userId: string) {
  const [tenant, userItems, audits] = await Promise.all([
    k.partition(keys.tenantPartition(T, A).pk),
    k.partition(keys.userPartition(userId).pk),
    Promise.all(Array.from({ length: 16 }, (_, i) => k.partition(keys.auditShard(T, A, i).pk))).then((a) => a.flat()),
  ]);
  return JSON.stringify({ tenant, userItems, audits: audits.length });
}

/** A problem body without what differs per request (its id), with the user id masked. */
const shape = (body: Record<string, unknown>, userId: string) => JSON.parse(JSON.stringify({ ...body, requestId: undefined }).replaceAll(userId, '<userId>'));

beforeAll(async () => {
  k = await createKit('facilities');
  [A, B] = await Promise.all(['Grants A', 'Grants B'].map(async (name) => (await k.req('POST', '/v1/tenants', { name })).body.id as string));
  // Roles belong to the access module: a role of A written by exact key (as the chapters suite does).
  await k.store.put({ ...keys.role(ROLE), Type: 'Role', id: ROLE, tenantId: A, name: 'auditor' });
});
afterAll(() => k?.t.drop());

describe('PUT /v1/tenants/{tenantId}/members/{userId}: a user of another tenant needs its e-mail', () => {
  it('with the right e-mail (trimmed, any case): added, and listed in the tenant with its e-mail', async () => {
    const bea = await user(B, 'bea@b.example');
    const r = await k.req('PUT', members(A, bea), { roleIds: [ROLE], email: '  Bea@B.Example ' });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ tenantId: A, userId: bea, userEmail: 'bea@b.example', roleIds: [ROLE] });
    expect((await k.req('GET', `/v1/tenants/${A}/members`)).body.items.map((g: { userId: string }) => g.userId)).toContain(bea);
    expect((await k.req('GET', members(A, bea))).body).toMatchObject({ id: r.body.id, userEmail: 'bea@b.example' });
    expect(await k.get(keys.membershipOfScope(T, A, bea))).toMatchObject({ tenantGrantId: r.body.id });
    expect(await k.get(keys.membershipOfUser(bea, T, A))).toMatchObject({ tenantGrantId: r.body.id });

    // Already granted here: the user is visible to A, so replacing its roles needs no e-mail...
    const again = await k.req('PUT', members(A, bea), { roleIds: [] });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ id: r.body.id, roleIds: [] });
    // ...but a given e-mail is still checked.
    const wrong = await k.req('PUT', members(A, bea), { roleIds: [ROLE], email: 'someone@b.example' });
    expect(wrong.status).toBe(404);
    expect((await k.req('GET', members(A, bea))).body.roleIds).toEqual([]);
  });

  it('without e-mail, with a wrong or malformed one, or with an unknown id: the same 404 naming userId, nothing written', async () => {
    const cal = await user(B, 'cal@b.example');
    const unknown = ulid();
    const before = await tableState(cal);
    const beforeUnknown = await tableState(unknown);
    const attempts = [
      { id: cal, body: { roleIds: [ROLE] } },
      { id: cal, body: {} },
      { id: cal, body: { email: 'cal@a.example' } },
      { id: cal, body: { roleIds: [ROLE], email: 'not an e-mail' } },
      { id: cal, body: { email: '' } },
      // A role that would be refused (400) does not come first: the answer is still the 404.
      { id: cal, body: { roleIds: ['no-such-role'] } },
      { id: unknown, body: { roleIds: [ROLE] } },
      { id: unknown, body: { roleIds: [ROLE], email: 'cal@b.example' } },
    ];
    const answers = [];
    for (const a of attempts) {
      const r = await k.req('PUT', members(A, a.id), a.body);
      expect(r.status, `${JSON.stringify(a.body)} → ${JSON.stringify(r.body)}`).toBe(404);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(r.body).toMatchObject({ code: 'NOT_FOUND', errors: [{ field: 'userId' }] });
      expect(r.body.detail).not.toContain('cal@');
      answers.push(shape(r.body, a.id));
    }
    for (const a of answers) expect(a).toEqual(answers[0]);
    // Bodies of the same user id are equal byte for byte but for the request id.
    const [x, y] = await Promise.all([k.req('PUT', members(A, cal), {}), k.req('PUT', members(A, cal), { email: 'wrong@b.example' })]);
    expect({ ...x.body, requestId: 0 }).toEqual({ ...y.body, requestId: 0 });

    expect(await tableState(cal)).toBe(before);
    expect(await tableState(unknown)).toBe(beforeUnknown);
    expect(await k.get(keys.membershipOfScope(T, A, cal))).toBeUndefined();
    expect((await k.req('GET', `/v1/tenants/${A}/members`)).body.items.map((g: { userId: string }) => g.userId)).not.toContain(cal);
  });

  it('a user of the tenant itself: no e-mail needed; a given one must match (else the same 404)', async () => {
    const own = await user(A, 'own@a.example');
    const wrong = await k.req('PUT', members(A, own), { email: 'other@a.example' });
    expect(wrong.status).toBe(404);
    const unknown = ulid();
    expect(shape(wrong.body, own)).toEqual(shape((await k.req('PUT', members(A, unknown), {})).body, unknown));
    expect(await k.get(keys.membershipOfScope(T, A, own))).toBeUndefined();
    const r = await k.req('PUT', members(A, own), { roleIds: [ROLE] });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ userId: own, userEmail: 'own@a.example' });
    expect((await k.req('PUT', members(A, own), { roleIds: [], email: 'OWN@a.example' })).status).toBe(200);
  });

  it('the service applies the rule too (SDK, CLI, seeds call it directly)', async () => {
    const dee = await user(B, 'dee@b.example');
    await expect(k.identity.memberships.grant(k.ctx, A, dee, { roleIds: [] })).rejects.toMatchObject({ code: 'NOT_FOUND', details: { errors: [{ field: 'userId' }] } });
    await expect(k.identity.memberships.grant(k.ctx, A, dee, { email: 'dee@a.example' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await k.identity.memberships.check(A, dee)).toBeUndefined();
    expect(await k.identity.memberships.grant(k.ctx, A, dee, { email: 'DEE@b.example' })).toMatchObject({ created: true, grant: { userId: dee } });
  });
});

describe('GET / DELETE /v1/tenants/{tenantId}/members/{userId} of a user who is not a member', () => {
  it('404 revealing nothing (the same answer for an unknown id), and nothing changed', async () => {
    const eve = await user(B, 'eve@b.example');
    const own = await user(A, 'own-not-granted@a.example');
    const unknown = ulid();
    // Eve is a member of B (a grant there): still nothing of it is visible from A.
    expect((await k.req('PUT', members(B, eve), { roleIds: [] })).status).toBe(201);
    const before = await tableState(eve);
    for (const method of ['GET', 'DELETE']) {
      const shapes = [];
      for (const id of [eve, unknown, own]) {
        const r = await k.req(method, members(A, id));
        expect(r.status, `${method} ${id} → ${JSON.stringify(r.body)}`).toBe(404);
        expect(r.body.code).toBe('NOT_FOUND');
        expect(JSON.stringify(r.body)).not.toMatch(/eve@|Private|Person/);
        shapes.push(shape(r.body, id));
      }
      expect(shapes[1]).toEqual(shapes[0]);
      expect(shapes[2]).toEqual(shapes[0]);
    }
    expect(await tableState(eve)).toBe(before);
    expect(await k.get(keys.membershipOfScope(T, B, eve))).toBeDefined();
  });
});
