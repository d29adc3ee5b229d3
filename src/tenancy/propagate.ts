/**
 * Keeps denormalized display fields in step (scope name/code on a user's membership edges, user
 * display name/type on a scope's member edges, catalog item names on assignments). Runs after the
 * rename's own transaction, in bounded transactions of ≤ 100 updates. Each update requires the
 * edge to still exist, so a membership removed meanwhile is not resurrected as a partial item.
 * Display fields only: authorization never reads them.
 */
import { isGatehouseError } from '../errors.ts';
import type { Key } from '../store/keys.ts';
import { LIMITS, tx, type Store } from '../store/store.ts';

export async function propagate(store: Store, targets: Key[], set: Record<string, unknown>): Promise<number> {
  let updated = 0;
  for (let i = 0; i < targets.length; i += LIMITS.transactActions) {
    const chunk = targets.slice(i, i + LIMITS.transactActions);
    try {
      await store.transactWrite(chunk.map((k) => tx.update(k, { set, mustExist: true })));
      updated += chunk.length;
    } catch (e) {
      if (!isGatehouseError(e, 'NOT_FOUND')) throw e;
      // An edge of this chunk went away concurrently: update the rest one by one.
      for (const k of chunk) {
        try {
          await store.update(k, { set, mustExist: true });
          updated++;
        } catch (err) {
          if (!isGatehouseError(err, 'NOT_FOUND')) throw err;
        }
      }
    }
  }
  return updated;
}
