/**
 * Who receives a tenant's license notices. Injectable: the composition root can pass a resolver
 * backed by the access engine (users holding `tenant-admin`). The default reads the tenant's users
 * through the tenant index (GSI1 `<T>#<tid>` / `USER#…`) and keeps the active ones whose stored
 * `userType` is `client_admin` (001's user_type).
 */
import { keys } from '../store/keys.ts';
import type { Item, Store } from '../store/store.ts';

export interface Recipient {
  userId: string;
  email: string;
  firstName?: string;
  lastName?: string;
}

export type RecipientResolver = (tenantId: string) => Promise<Recipient[]>;

export function defaultRecipients(store: Store, T: string): RecipientResolver {
  return async (tenantId) => {
    const q = keys.tenantEntities(T, tenantId, 'USER');
    const users = await store.queryAll<Item>({
      index: q.index,
      pk: q.pk,
      sk: { beginsWith: q.skPrefix! },
      filter: { expression: '#ut = :admin AND #s = :active', names: { '#ut': 'userType', '#s': 'status' }, values: { ':admin': 'client_admin', ':active': 'active' } },
    });
    return users
      .filter((u) => typeof u.email === 'string' && u.email)
      .map((u) => ({ userId: String(u.id), email: String(u.email), firstName: u.firstName as string | undefined, lastName: u.lastName as string | undefined }));
  };
}
