/**
 * Access version stamps. The decision cache is validated by reading the stamps a decision depends
 * on (one wave); every write that can change a decision bumps the right stamp in its own
 * transaction, so a revocation is seen by the very next check on every instance.
 *  - user stamp: the user's assignments, group memberships, status;
 *  - tenant stamp: the tenant's status, roles, groups, group roles, scope tree;
 *  - global stamp: global (system) roles and the permission catalog.
 * Tenant and global stamps are read by every check, so they are written to every shard and read
 * from one random shard: reads spread over partitions, writes (rare) pay N items.
 */
import { allShards, keys, SHARDS } from '../store/keys.ts';
import { tx, type TxAction } from '../store/store.ts';

const bump = (key: { PK: string; SK: string }): TxAction => tx.update(key, { add: { stamp: 1 } });

export const stamps = {
  bumpUser: (userId: string): TxAction[] => [bump(keys.userStamp(userId))],
  bumpTenant: (T: string, tenantId: string): TxAction[] => allShards(SHARDS.stampRead).map((s) => bump(keys.tenantStamp(T, tenantId, s))),
  bumpGlobal: (): TxAction[] => allShards(SHARDS.stampRead).map((s) => bump(keys.globalStamp(s))),
  /** The keys to read for validation: the user's, one tenant shard, one global shard. */
  readKeys: (T: string, tenantId: string, userId: string) => {
    const shard = Math.floor(Math.random() * SHARDS.stampRead);
    return [keys.userStamp(userId), keys.tenantStamp(T, tenantId, shard), keys.globalStamp(shard)];
  },
};
