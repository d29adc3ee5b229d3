/**
 * One instant per mutation. The store stamps `updatedAt` from its clock for every action; a write
 * that also stores copies of the record (child edge, code/name guard snapshot) and returns it must
 * see the same instant everywhere. `at(store, t)` is a view of the store with its clock pinned to
 * `t` (a prototype view: same client, table and cursor secret).
 */
import type { Store } from '../store/store.ts';

export function at(store: Store, t: Date): Store {
  return Object.create(store, { now: { value: () => t } }) as Store;
}
