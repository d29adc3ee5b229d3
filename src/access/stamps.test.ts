/**
 * Shared stamp reads (createStampReader): concurrent validations share one BatchGetItem, and a
 * check never reuses a read that was already sent when it started — so a revocation committed
 * before a check starts is seen by that check, however many reads are in flight on the instance.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestTable, testEndpoint, type TestTable } from '../../test/harness.ts';
import { measure } from '../store/accounting.ts';
import { createDynamoClients } from '../store/client.ts';
import { Store } from '../store/store.ts';
import type { ScopeRef } from '../tenancy/model.ts';
import { ctx, facilities, fixtures, sleep, storeOf } from './fixtures.test-util.ts';
import { createAccess, type Access } from './index.ts';

const h = facilities();
let t: TestTable;
let a: Access; // writes
let f: ReturnType<typeof fixtures>;
let tid: string;
let building: ScopeRef;
let reader: string;

/** A second instance whose BatchGetItem responses can be held back (the read is done, the answer waits). */
function gatedInstance(cache: { stampReadsInFlight?: number } = {}) {
  const clients = createDynamoClients({ endpoint: testEndpoint() });
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  let sent = 0;
  clients.raw.middlewareStack.add(
    (next, context) => async (args) => {
      const batch = context.commandName === 'BatchGetItemCommand';
      if (batch) sent++;
      const out = await next(args);
      if (batch && gate) await gate;
      return out;
    },
    { step: 'initialize', name: 'testGate' },
  );
  const store = new Store({ doc: clients.doc, tableName: t.tableName, cursorSecret: 'access-tests-secret-0123456789' });
  const access = createAccess({ store, hierarchy: h, cache });
  return {
    access,
    get sent() {
      return sent;
    },
    hold() {
      gate = new Promise<void>((r) => (open = r));
    },
    release() {
      gate = undefined;
      open?.();
    },
    close: () => clients.raw.destroy(),
  };
}

beforeAll(async () => {
  t = await createTestTable();
  f = fixtures(storeOf(t), h);
  a = createAccess({ store: storeOf(t), hierarchy: h });
  await a.permissions.ensure(ctx, [{ key: 'devices:read' }]);
  tid = await f.tenant();
  building = await f.node(tid, 'building', await f.node(tid, 'project'));
  reader = (await a.roles.create(ctx, tid, { name: 'reader', permissions: [{ key: 'devices:read', effect: 'ALLOW' }] })).id;
}, 60_000);
afterAll(() => t?.drop());

const checkOn = (x: Access, userId: string) => x.engine.check({ tenantId: tid, userId, permission: 'devices:read', scope: building });

describe('shared stamp reads', () => {
  it('concurrent validated checks of different users share one BatchGetItem (1 wave)', async () => {
    const users = await Promise.all(Array.from({ length: 10 }, () => f.user(tid)));
    for (const u of users) await a.assignments.create(ctx, tid, { userId: u, roleId: reader, scope: building });
    const b = createAccess({ store: storeOf(t), hierarchy: h });
    await sleep(1100); // past the settle window of the writes
    for (const u of users) await checkOn(b, u);
    const { result, log } = await measure('together', () => Promise.all(users.map((u) => checkOn(b, u))));
    expect(result.every((d) => d.allowed && d.source === 'validated')).toBe(true);
    expect(log.byCommand()).toEqual({ BatchGetItem: 1 });
    expect(log.waves).toBe(1);
  });

  it('a check that starts while a stamp read is in flight does not reuse it: a revocation in between is seen', async () => {
    const u = await f.user(tid);
    const asg = await a.assignments.create(ctx, tid, { userId: u, roleId: reader, scope: building });
    // One read in flight at most: the second check has to wait for the first read, the worst case.
    const b = gatedInstance({ stampReadsInFlight: 1 });
    try {
      await sleep(1100);
      await checkOn(b.access, u);
      expect((await checkOn(b.access, u)).source).toBe('validated');

      b.hold();
      const before = b.sent;
      const first = checkOn(b.access, u); // its read is sent now and answered before the revocation
      await sleep(200);
      expect(b.sent).toBe(before + 1);
      await a.assignments.revoke(ctx, tid, asg.id); // committed (another instance)
      const second = checkOn(b.access, u); // starts after the commit: must deny
      await sleep(50);
      b.release();
      expect(await first).toMatchObject({ allowed: true, source: 'validated' }); // started before the revocation
      expect(await second).toMatchObject({ allowed: false, reason: 'no-grant' });
      expect(b.sent).toBeGreaterThanOrEqual(before + 2); // its own read, sent after the first returned
    } finally {
      b.release();
      b.close();
    }
  });

  it('with reads in flight, a queued read is not held up beyond maxQueueMs… and all of them resolve', async () => {
    const users = await Promise.all(Array.from({ length: 3 }, () => f.user(tid)));
    for (const u of users) await a.assignments.create(ctx, tid, { userId: u, roleId: reader, scope: building });
    const b = gatedInstance({ stampReadsInFlight: 1 });
    try {
      await sleep(1100);
      for (const u of users) await checkOn(b.access, u);
      b.hold();
      const before = b.sent;
      const first = checkOn(b.access, users[0]);
      await sleep(20);
      const rest = Promise.all(users.slice(1).map((u) => checkOn(b.access, u)));
      // The first request is held; after maxQueueMs (100 ms) the queued reads go out anyway, together.
      await sleep(400);
      expect(b.sent).toBe(before + 2);
      b.release();
      expect((await first).allowed).toBe(true);
      expect((await rest).every((d) => d.allowed && d.source === 'validated')).toBe(true);
    } finally {
      b.release();
      b.close();
    }
  });
});
