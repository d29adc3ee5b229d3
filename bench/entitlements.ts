/**
 * Entitlements: request waves of effective settings (goal ≤ 2), the cost of writing the audit
 * record in the mutation's transaction (goal ≤ 1.2× the same mutation without it), and p50s of
 * the hot paths. Figures: settings.effective.{waves,requests,p50_ms}, audit.write_overhead_ratio
 * (the whole mutation: its read wave and its transaction), audit.tx_only_overhead_ratio (the
 * transaction alone; on DynamoDB Local every extra item costs a SQLite write, so this one runs
 * higher than on DynamoDB), audit.{with,without}.p50_ms, audit.range.{waves,p50_ms}, license.seat.assign.p50_ms,
 * license.expiring.{waves,p50_ms}.
 */
import { ulid } from 'ulid';
import { auditPut } from '../src/audit/record.ts';
import { createEntitlements } from '../src/entitlements/index.ts';
import { measure } from '../src/store/accounting.ts';
import { keys } from '../src/store/keys.ts';
import { tx, type Store } from '../src/store/store.ts';
import { loadHierarchy } from '../src/tenancy/hierarchy.ts';
import type { Hierarchy, ScopeNodeRecord, ScopeRef } from '../src/tenancy/model.ts';
import type { RequestContext } from '../src/context.ts';
import { percentile, round, timePair, timeSeq } from './stats.ts';

export async function benchEntitlements(o: { store: Store; hierarchy?: Hierarchy; n?: number; log?: (s: string) => void }): Promise<Record<string, number>> {
  const { store } = o;
  const h = o.hierarchy ?? loadHierarchy('facilities');
  const n = o.n ?? 200;
  const ctx: RequestContext = { actor: { id: 'bench-user', type: 'user' }, requestId: 'bench', ip: '127.0.0.1', userAgent: 'bench' };
  const ent = createEntitlements({ store, hierarchy: h });
  const out: Record<string, number> = {};

  // A tenant with a four-level chain (facilities: client → project → building → zone) and a user.
  const tenantId = ulid();
  await store.put({ ...keys.tenant(h.T, tenantId), ...keys.tenantIndex(h.T, tenantId), Type: 'Tenant', id: tenantId, name: `bench ${tenantId}`, status: 'active', attributes: {} });
  const kinds = Object.values(h.kinds);
  const chain: ScopeNodeRecord[] = [];
  let parent: ScopeNodeRecord | undefined;
  for (let depth = 0; depth < 3; depth++) {
    const kind = kinds.find((k) => k.parent === (parent ? parent.kind : h.tenantKind));
    if (!kind) break;
    const id = ulid();
    const path: ScopeRef[] = parent ? [...parent.path, { kind: parent.kind, id: parent.id }] : [{ kind: h.tenantKind, id: tenantId }];
    const node = {
      ...keys.scopeNode(kind.prefix, id),
      Type: 'ScopeNode', id, tenantId, kind: kind.name, name: `${kind.name} ${depth}`, parentKind: parent?.kind ?? h.tenantKind, parentId: parent?.id ?? tenantId, path, attributes: {},
    };
    await store.put(node);
    chain.push(node as unknown as ScopeNodeRecord);
    parent = node as unknown as ScopeNodeRecord;
  }
  const leaf = chain.at(-1)!;
  const userId = ulid();
  await store.put({ ...keys.user(userId), ...keys.userIndex(h.T, tenantId, userId, 'active', '9999-12-31'), Type: 'User', id: userId, tenantId, email: `${userId.toLowerCase()}@bench.test`, status: 'active' });

  // Ten settings per level, one locked at the tenant.
  const levels: ScopeRef[] = [{ kind: h.tenantKind, id: tenantId }, ...chain.map((c) => ({ kind: c.kind, id: c.id })), { kind: 'user', id: userId }];
  for (const [i, scope] of levels.entries()) {
    for (let k = 0; k < 10; k++) {
      const key = `key${k}`;
      if (k === 0 && i > 0) continue;
      await ent.settings.put(ctx, tenantId, scope, key, { value: i * 100 + k, valueType: 'number', isOverridable: !(k === 0 && i === 0) });
    }
  }
  const eff = await measure('settings.effective', () => ent.settings.effective(tenantId, { kind: leaf.kind, id: leaf.id }, { userId }));
  out['settings.effective.waves'] = eff.log.waves;
  out['settings.effective.requests'] = eff.log.count;
  const effTimes = await timeSeq(n, () => ent.settings.effective(tenantId, { kind: leaf.kind, id: leaf.id }, { userId }));
  out['settings.effective.p50_ms'] = round(percentile(effTimes, 50));
  o.log?.(`effective settings: ${eff.log.waves} waves, ${eff.log.count} requests`);

  // The same mutation with and without its audit record. A mutation as the service performs it
  // (settings.put: one read wave — the scope node and the current value — then one transaction
  // with the scope and ancestor-lock checks), and the bare transaction alone for reference.
  const KIND = h.kinds[leaf.kind].prefix;
  const ownerCheck = tx.check(keys.scopeNode(KIND, leaf.id), { mustExist: true, condition: { expression: '#t = :t', names: { '#t': 'tenantId' }, values: { ':t': tenantId } } });
  const lockChecks = (key: string) =>
    leaf.path.map((a) =>
      tx.check(keys.setting(a.kind === h.tenantKind ? h.T : h.kinds[a.kind].prefix, a.id, key), {
        condition: { expression: 'attribute_not_exists(#pk) OR #o = :t', names: { '#pk': 'PK', '#o': 'isOverridable' }, values: { ':t': true } },
      }),
    );
  const setting = (key: string, i: number) => ({ ...keys.setting(KIND, leaf.id, key), Type: 'Setting', tenantId, scope: { kind: leaf.kind, id: leaf.id }, key, value: i, valueType: 'number', isOverridable: true, updatedBy: ctx.actor.id });
  let seq = 0;
  const mutation = async (i: number, tag: string, withAudit: boolean, reads: boolean) => {
    // Warm-up runs reuse indexes: every call writes a new key.
    const key = `overhead.${tag}.${seq++}`;
    if (reads) await Promise.all([store.get(keys.scopeNode(KIND, leaf.id)), store.get(keys.setting(KIND, leaf.id, key))]);
    await store.transactWrite([
      ownerCheck,
      ...lockChecks(key),
      tx.put(setting(key, i), { ifNotExists: true }),
      ...(withAudit ? [auditPut(ctx, { T: h.T, tenantId, action: 'setting.create', entityType: 'setting', entityId: key, after: { key, value: i, valueType: 'number' } })] : []),
    ]);
  };
  const [withAudit, without] = await timePair(n, (i) => mutation(i, 'a', true, true), (i) => mutation(i, 'b', false, true));
  out['audit.with.p50_ms'] = round(percentile(withAudit, 50));
  out['audit.without.p50_ms'] = round(percentile(without, 50));
  out['audit.write_overhead_ratio'] = round(percentile(withAudit, 50) / percentile(without, 50));
  const [txWith, txWithout] = await timePair(n, (i) => mutation(i, 'c', true, false), (i) => mutation(i, 'd', false, false));
  out['audit.tx_only_overhead_ratio'] = round(percentile(txWith, 50) / percentile(txWithout, 50));
  o.log?.(`audit overhead: mutation ×${out['audit.write_overhead_ratio']}, transaction alone ×${out['audit.tx_only_overhead_ratio']}`);

  const page = await measure('audit.range', () => ent.audit.range(tenantId, { limit: 25 }));
  out['audit.range.waves'] = page.log.waves;
  out['audit.range.p50_ms'] = round(percentile(await timeSeq(Math.min(n, 100), () => ent.audit.range(tenantId, { limit: 25 }), 5), 50));

  // Seats: assign and release on one license.
  await ent.products.create(ctx, { id: `bench-${tenantId}`, name: 'Bench' });
  const lic = await ent.licenses.create(ctx, tenantId, { productId: `bench-${tenantId}`, seats: 1_000_000, startDate: '2025-01-01', endDate: new Date(Date.now() + 30 * 86400_000).toISOString() });
  const seatTimes = await timeSeq(Math.min(n, 100), async (i) => {
    if (i % 2 === 0) await ent.licenses.assignSeat(ctx, tenantId, lic.id, userId);
    else await ent.licenses.releaseSeat(ctx, tenantId, lic.id, userId);
  }, 4);
  out['license.seat.assign.p50_ms'] = round(percentile(seatTimes, 50));
  const before = new Date(Date.now() + 60 * 86400_000).toISOString();
  const exp = await measure('license.expiring', () => ent.licenses.endingBefore(before, { limit: 25 }));
  out['license.expiring.waves'] = exp.log.waves;
  out['license.expiring.p50_ms'] = round(percentile(await timeSeq(Math.min(n, 100), () => ent.licenses.endingBefore(before, { limit: 25 }), 5), 50));
  return out;
}
