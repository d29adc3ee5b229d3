/**
 * Store access for users, their unique-identifier guards and membership edges (keys from keys.ts
 * only). Every read states its DynamoDB request.
 */
import { allShards, keys, SHARDS } from '../store/keys.ts';
import type { Item, Page, Store } from '../store/store.ts';
import { prefixOf } from '../tenancy/hierarchy.ts';
import { mergedPage } from '../tenancy/merge.ts';
import type { Hierarchy, UserRecord, UserStatus } from '../tenancy/model.ts';
import type { PageQuery } from '../tenancy/repository.ts';
import type { MembershipView, UserView } from './schema.ts';

/** GSI3 sort key for users without an end date: they sort after every dated one. */
export const OPEN_END = '9999-12-31';

export const TYPES = { user: 'User', email: 'EmailIdentity', phone: 'PhoneIdentity', username: 'UsernameIdentity', membership: 'Membership', member: 'Member' } as const;

/** The stored user: the access engine's UserRecord plus profile and (protected) secrets. */
export interface StoredUser extends UserRecord {
  title?: string;
  department?: string;
  userType: string;
  provider: string;
  invitedBy?: string;
  invitedAt?: string;
  mfaEnabled: boolean;
  mfaType?: string;
  /** AES-256-GCM ciphertext (secrets.ts); never returned. */
  mfaSecret?: string;
  /** scrypt hash (secrets.ts); never returned. */
  passwordHash?: string;
  passwordChangedAt?: string;
  lastLoginAt?: string;
}

const KEY_ATTRS = new Set(['PK', 'SK', 'Type', ...[1, 2, 3, 4, 5].flatMap((n) => [`GSI${n}PK`, `GSI${n}SK`])]);
/** A stored item without its key attributes: a record to rebuild an item from. */
export function withoutKeys<T extends object>(it: T): T {
  return Object.fromEntries(Object.entries(it).filter(([k]) => !KEY_ATTRS.has(k))) as T;
}

export const displayNameOf = (u: Pick<StoredUser, 'displayName' | 'firstName' | 'lastName' | 'email'>) =>
  u.displayName || [u.firstName, u.lastName].filter(Boolean).join(' ') || u.email;

/** The public view: fields picked one by one, so a secret can never slip through a spread. */
export function userView(it: Item | StoredUser): UserView {
  const u = it as StoredUser;
  const opt = <K extends keyof StoredUser>(k: K) => (u[k] !== undefined && u[k] !== null ? { [k]: u[k] } : {});
  return {
    id: u.id,
    tenantId: u.tenantId,
    email: u.email,
    ...opt('phone'),
    ...opt('username'),
    status: u.status,
    ...opt('endDate'),
    ...opt('firstName'),
    ...opt('lastName'),
    displayName: displayNameOf(u),
    ...opt('title'),
    ...opt('department'),
    userType: (u.userType ?? 'internal') as UserView['userType'],
    provider: (u.provider ?? 'password') as UserView['provider'],
    ...opt('invitedBy'),
    ...opt('invitedAt'),
    mfaEnabled: !!u.mfaEnabled,
    ...opt('mfaType'),
    hasPassword: !!u.passwordHash,
    ...opt('passwordChangedAt'),
    ...opt('lastLoginAt'),
    version: u.version,
    createdAt: u.createdAt,
    updatedAt: u.updatedAt,
  } as UserView;
}

export function membershipView(it: Item): MembershipView {
  const m = it as Record<string, unknown>;
  const s = (k: string) => (typeof m[k] === 'string' ? { [k]: m[k] as string } : {});
  return {
    tenantId: String(m.tenantId),
    userId: String(m.userId),
    scope: { kind: String(m.scopeKind), id: String(m.scopeId) },
    ...s('scopeName'),
    ...s('scopeCode'),
    ...s('userDisplayName'),
    ...s('userType'),
    ...s('userEmail'),
    joinedAt: String(m.joinedAt),
    ...s('tenantGrantId'),
    ...(Array.isArray(m.roleIds) ? { roleIds: m.roleIds as string[] } : {}),
    version: Number(m.version),
  };
}

export interface EdgeFields {
  tenantId: string;
  userId: string;
  scopeKind: string;
  scopeId: string;
  joinedAt: string;
  tenantGrantId?: string;
  roleIds?: string[];
}

export class IdentityRepository {
  readonly T: string;
  constructor(
    readonly store: Store,
    readonly h: Hierarchy,
  ) {
    this.T = h.T;
  }

  K(kind: string): string {
    const p = prefixOf(this.h, kind);
    if (!p) throw new Error(`unknown kind ${kind}`);
    return p;
  }

  userItem(u: StoredUser): Item {
    return { ...withoutKeys(u), ...keys.user(u.id), ...keys.userIndex(this.T, u.tenantId, u.id, u.status, u.endDate ?? OPEN_END), Type: TYPES.user };
  }
  emailGuard(u: StoredUser): Item {
    return { ...keys.email(u.email), Type: TYPES.email, email: u.email, userId: u.id, provider: u.provider, tenantId: u.tenantId };
  }
  phoneGuard(u: StoredUser): Item {
    return { ...keys.phone(u.phone!), Type: TYPES.phone, phone: u.phone, userId: u.id, tenantId: u.tenantId };
  }
  usernameGuard(u: StoredUser): Item {
    return { ...keys.username(u.username!), Type: TYPES.username, username: u.username, userId: u.id, tenantId: u.tenantId };
  }

  /** User-side edge `USER#uid` / `<KIND>#sid`: carries the scope's display fields. */
  userEdge(e: EdgeFields, scope: { name?: string; code?: string }): Item {
    return { ...keys.membershipOfUser(e.userId, this.K(e.scopeKind), e.scopeId), Type: TYPES.membership, ...e, scopeName: scope.name, scopeCode: scope.code };
  }
  /** Scope-side edge `<KIND>#sid` / `USER#uid`: carries the user's display fields (and, for a tenant grant, GSI2 by grant id). */
  scopeEdge(e: EdgeFields, u: StoredUser): Item {
    return {
      ...keys.membershipOfScope(this.K(e.scopeKind), e.scopeId, e.userId),
      ...(e.tenantGrantId ? keys.tenantGrantIndex(e.tenantGrantId) : {}),
      Type: TYPES.member,
      ...e,
      userDisplayName: displayNameOf(u),
      userType: u.userType,
      userEmail: u.email,
    };
  }

  /** GetItem `USER#id` / METADATA (the record, without its key attributes). */
  async getUser(id: string): Promise<StoredUser | undefined> {
    const it = await this.store.get<Item>(keys.user(id));
    return it ? (withoutKeys(it) as unknown as StoredUser) : undefined;
  }

  /** GetItem `EMAIL#<email>` / METADATA (the guard: userId + provider). */
  getEmailIdentity(email: string): Promise<{ userId: string; provider: string; tenantId: string } | undefined> {
    return this.store.get(keys.email(email));
  }

  /** Query GSI1 `<T>#tid` begins_with `USER#` (optionally filtered by status). */
  byTenant(tenantId: string, p: PageQuery & { status?: UserStatus }): Promise<Page<Item>> {
    const q = keys.tenantEntities(this.T, tenantId, 'USER');
    return this.store.query({
      index: q.index,
      pk: q.pk,
      sk: { beginsWith: q.skPrefix! },
      filter: p.status ? { expression: '#s = :s', names: { '#s': 'status' }, values: { ':s': p.status } } : undefined,
      limit: p.limit,
      cursor: p.cursor,
    });
  }

  /**
   * Users by status ordered by end date: ONE wave of Queries on every GSI3 shard
   * `USER#STATUS#<s>#<n>` (with `GSI3SK <= before` when given), merged by end date.
   */
  byStatus(status: UserStatus, p: PageQuery & { endBefore?: string }): Promise<Page<Item>> {
    return mergedPage(
      this.store,
      allShards(SHARDS.userStatus).map((n) => {
        const q = keys.usersByStatusShard(status, n);
        return { id: String(n), index: q.index, pk: q.pk, ...(p.endBefore ? { upper: p.endBefore } : {}) };
      }),
      { limit: p.limit ?? 25, cursor: p.cursor, ascending: true, skAttr: 'GSI3SK', binding: { usersByStatus: status, endBefore: p.endBefore } },
    );
  }

  /** Query `USER#uid` (strongly consistent): METADATA and the user's scope memberships (000 "user with workstreams"). */
  userWithMemberships(userId: string, kind: string | undefined, p: PageQuery): Promise<Page<Item>> {
    const values: Record<string, unknown> = { ':u': TYPES.user, ':m': TYPES.membership };
    let expression = '#t = :u OR #t = :m';
    if (kind) {
      values[':k'] = kind;
      expression = '#t = :u OR (#t = :m AND #k = :k)';
    }
    return this.store.query({
      pk: keys.userPartition(userId).pk,
      filter: { expression, names: { '#t': 'Type', ...(kind ? { '#k': 'scopeKind' } : {}) }, values },
      limit: p.limit,
      cursor: p.cursor,
    });
  }

  /** Query `USER#uid` begins_with `<KIND>#` (a kind), or the partition filtered to memberships. */
  membershipsOfUser(userId: string, kind: string | undefined, p: PageQuery & { tenantId?: string }): Promise<Page<Item>> {
    const conds: string[] = [];
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    if (!kind) {
      conds.push('#t = :m');
      names['#t'] = 'Type';
      values[':m'] = TYPES.membership;
    }
    if (p.tenantId) {
      conds.push('#tid = :tid');
      names['#tid'] = 'tenantId';
      values[':tid'] = p.tenantId;
    }
    const q = kind ? keys.membershipsOfUser(userId, this.K(kind)) : keys.userPartition(userId);
    return this.store.query({
      pk: q.pk,
      sk: q.skPrefix ? { beginsWith: q.skPrefix } : undefined,
      filter: conds.length ? { expression: conds.join(' AND '), names, values } : undefined,
      limit: p.limit,
      cursor: p.cursor,
    });
  }

  /** Query `<KIND>#sid` begins_with `USER#` (strongly consistent), kept to the tenant. */
  membersOfScope(kind: string, scopeId: string, p: PageQuery & { tenantId?: string }): Promise<Page<Item>> {
    const q = keys.membersOfScope(this.K(kind), scopeId);
    return this.store.query({
      pk: q.pk,
      sk: { beginsWith: q.skPrefix },
      filter: p.tenantId ? { expression: '#tid = :tid', names: { '#tid': 'tenantId' }, values: { ':tid': p.tenantId } } : undefined,
      limit: p.limit,
      cursor: p.cursor,
    });
  }

  /** Query GSI2 `TENANT_GRANT#<id>` (limit 1): a grant by its id. */
  async grantById(grantId: string): Promise<Item | undefined> {
    const q = keys.tenantGrantById(grantId);
    const page = await this.store.query<Item>({ index: q.index, pk: q.pk, limit: 1 });
    return page.items[0];
  }

  /**
   * Whatever in the user's partition would be orphaned by deleting the user: scope memberships
   * and grants, group memberships, role assignments (one Query, filtered on Type, limit 1; key
   * attributes cannot appear in a filter).
   */
  async userBlockers(userId: string): Promise<Item[]> {
    const page = await this.store.query<Item>({
      pk: keys.userPartition(userId).pk,
      filter: { expression: '#t IN (:m, :g, :a)', names: { '#t': 'Type' }, values: { ':m': TYPES.membership, ':g': 'GroupMember', ':a': 'Assignment' } },
      limit: 1,
    });
    return page.items;
  }

}
