/**
 * Groups (002 ReBAC): `GROUP#<id> / METADATA` scoped to a scope node (GSI1 tenant listing),
 * membership both ways (the group's scope is denormalized onto the user's edge, so a check knows
 * which groups matter at a scope without reading them), and `GROUP#<gid> / ROLE#<rid>` edges.
 * A group gives its roles within its scope and the scope's descendants.
 */
import { ulid } from 'ulid';
import { auditPut } from '../audit/record.ts';
import type { RequestContext } from '../context.ts';
import { GatehouseError, notFound, validation } from '../errors.ts';
import { keys } from '../store/keys.ts';
import { tx, type Item, type Page } from '../store/store.ts';
import type { ScopeRef, UserRecord } from '../tenancy/model.ts';
import { checkId, checkName, publicOf, type AccessDeps } from './common.ts';
import { sameScope, type GroupMemberRecord, type GroupRecord, type GroupRoleRecord, type RoleRecord } from './model.ts';
import { resolveScope } from './scopes.ts';
import { stamps } from './stamps.ts';

export interface GroupInput {
  name: string;
  description?: string;
  scope: ScopeRef;
  roleIds?: string[];
}

export const MAX_GROUP_ROLES = 50;

export type GroupsService = ReturnType<typeof createGroups>;

/** Item builders (also used by the bench's bulk loader). */
export const groupItems = {
  group: (T: string, g: { id: string; tenantId: string; name: string; description?: string; scope: ScopeRef }) => ({ ...keys.group(g.id), ...keys.groupIndex(T, g.tenantId, g.id), Type: 'Group', ...g }),
  roleEdge: (tenantId: string, groupId: string, roleId: string) => ({
    ...keys.groupRole(groupId, roleId),
    ...keys.roleHolderIndex(roleId, groupId, `GROUP#${groupId}`),
    Type: 'GroupRole',
    groupId,
    roleId,
    tenantId,
  }),
  /** Both edges of a membership; the group's scope is denormalized on them. */
  members: (m: { groupId: string; userId: string; tenantId: string; scope: ScopeRef }) => [
    { ...keys.groupMemberOfUser(m.userId, m.groupId), Type: 'GroupMember', ...m },
    { ...keys.groupMemberOfGroup(m.groupId, m.userId), Type: 'GroupMember', ...m },
  ],
};
const roleEdge = groupItems.roleEdge;

export function createGroups({ store, hierarchy: h }: AccessDeps) {
  const audit = (ctx: RequestContext, tenantId: string, action: string, entityId: string, extra: Record<string, unknown> = {}) =>
    auditPut(ctx, { T: h.T, tenantId, action, entityType: 'Group', entityId, ...extra }, store.now());

  async function readGroup(tenantId: string, groupId: string): Promise<GroupRecord> {
    checkId('groupId', groupId);
    const g = await store.get<GroupRecord>(keys.group(groupId));
    if (!g || g.tenantId !== tenantId) throw notFound('group', groupId);
    return g;
  }

  /** A role a group of this tenant may hold: the tenant's own or a global one. */
  async function assignableRoles(tenantId: string, roleIds: string[], field: string): Promise<RoleRecord[]> {
    const found = await store.batchGet<RoleRecord>(roleIds.map((r) => keys.role(r)));
    return roleIds.map((rid, i) => {
      const r = found.find((f) => f.id === rid);
      if (!r || (r.scope === 'tenant' && r.tenantId !== tenantId)) {
        throw new GatehouseError('NOT_FOUND', `${field}[${i}]: no role ${rid} in this tenant`, { entity: 'role', id: rid, errors: [{ field: `${field}[${i}]`, message: 'Not found' }] });
      }
      return r;
    });
  }

  const roleExists = (roleId: string) => tx.check(keys.role(roleId), { mustExist: true, onConditionFailed: () => notFound('role', roleId) });
  const groupExists = (groupId: string) => tx.check(keys.group(groupId), { mustExist: true, onConditionFailed: () => notFound('group', groupId) });

  /** A user may join a group of a tenant it belongs to (home tenant or tenant grant). */
  async function memberUser(tenantId: string, userId: string): Promise<UserRecord> {
    checkId('userId', userId);
    const items = await store.batchGet<Item>([keys.user(userId), keys.membershipOfUser(userId, h.T, tenantId)]);
    const user = items.find((i) => i.SK === 'METADATA') as UserRecord | undefined;
    const grant = items.find((i) => i.SK !== 'METADATA');
    if (!user || (user.tenantId !== tenantId && !grant)) {
      throw new GatehouseError('NOT_FOUND', `userId: no user ${userId} in this tenant`, { entity: 'user', id: userId, errors: [{ field: 'userId', message: 'Not found in this tenant' }] });
    }
    return user;
  }

  return {
    async create(ctx: RequestContext, tenantId: string, input: GroupInput): Promise<GroupRecord & { roleIds: string[] }> {
      const name = checkName('name', input?.name);
      if (input.description !== undefined && (typeof input.description !== 'string' || input.description.length > 1000)) throw validation('description', 'At most 1000 characters');
      const roleIds = input.roleIds ?? [];
      if (!Array.isArray(roleIds) || roleIds.length > MAX_GROUP_ROLES) throw validation('roleIds', `At most ${MAX_GROUP_ROLES} roles`);
      if (new Set(roleIds).size !== roleIds.length) throw validation('roleIds', 'Duplicate role');
      roleIds.forEach((r, i) => checkId(`roleIds[${i}]`, r));
      const [scope] = await Promise.all([resolveScope(store, h, tenantId, input.scope), assignableRoles(tenantId, roleIds, 'roleIds')]);
      const id = ulid();
      const item = groupItems.group(h.T, { id, tenantId, name, description: input.description, scope: scope.ref });
      await store.transactWrite([
        tx.put(item, { ifNotExists: true }),
        ...roleIds.flatMap((rid) => [tx.put(roleEdge(tenantId, id, rid)), roleExists(rid)]),
        // No members yet: nothing a check sees changes, so no stamp.
        audit(ctx, tenantId, 'group.create', id, { after: { ...item, roleIds } }),
      ]);
      return { ...publicOf<GroupRecord>(store.stampForPut(item)), roleIds };
    },

    get: (tenantId: string, groupId: string) => readGroup(tenantId, groupId).then((g) => publicOf<GroupRecord>(g)),

    /** Groups of a tenant (GSI1 `<T>#<tid>` / `GROUP#`, a listing). */
    async list(tenantId: string, opts: { limit?: number; cursor?: string } = {}): Promise<Page<GroupRecord>> {
      const q = keys.tenantEntities(h.T, tenantId, 'GROUP');
      const page = await store.query<GroupRecord>({ index: q.index, pk: q.pk, sk: { beginsWith: q.skPrefix! }, limit: opts.limit, cursor: opts.cursor });
      return { items: page.items.map((i) => publicOf<GroupRecord>(i)), cursor: page.cursor };
    },

    /**
     * Deletes a group: METADATA and its role edges in one transaction with the tenant stamp (from
     * then on the group grants nothing), then the membership edges in bounded transactions.
     */
    async remove(ctx: RequestContext, tenantId: string, groupId: string) {
      const g = await readGroup(tenantId, groupId);
      const q = keys.groupRoles(groupId);
      const edges = await store.queryAll<GroupRoleRecord & Item>({ pk: q.pk, sk: { beginsWith: q.skPrefix } });
      await store.transactWrite([
        tx.delete(keys.group(groupId), { expectedVersion: g.version }),
        ...edges.map((e) => tx.delete(keys.groupRole(groupId, e.roleId))),
        ...stamps.bumpTenant(h.T, tenantId),
        audit(ctx, tenantId, 'group.delete', groupId, { before: g, related: { roleIds: edges.map((e) => e.roleId) }, severity: 'warning' }),
      ]);
      const m = keys.groupMembers(groupId);
      const members = await store.queryAll<GroupMemberRecord & Item>({ pk: m.pk, sk: { beginsWith: m.skPrefix } });
      for (let i = 0; i < members.length; i += 45) {
        const chunk = members.slice(i, i + 45);
        await store.transactWrite([
          ...chunk.flatMap((mm) => [tx.delete(keys.groupMemberOfGroup(groupId, mm.userId)), tx.delete(keys.groupMemberOfUser(mm.userId, groupId))]),
          audit(ctx, tenantId, 'group.members.remove', groupId, { related: { userIds: chunk.map((c) => c.userId), reason: 'group deleted' } }),
        ]);
      }
      return { id: groupId, deleted: true, members: members.length };
    },

    /** PUT …/members/{userId}: idempotent; bumps the user's stamp. */
    async addMember(ctx: RequestContext, tenantId: string, groupId: string, userId: string): Promise<GroupMemberRecord> {
      const [g] = await Promise.all([readGroup(tenantId, groupId), memberUser(tenantId, userId)]);
      const existing = await store.get<GroupMemberRecord>(keys.groupMemberOfUser(userId, groupId));
      if (existing) return publicOf<GroupMemberRecord>(existing);
      const [userEdge, groupEdge] = groupItems.members({ groupId, userId, tenantId, scope: g.scope });
      await store.transactWrite([
        tx.put(userEdge),
        tx.put(groupEdge),
        groupExists(groupId),
        ...stamps.bumpUser(userId),
        audit(ctx, tenantId, 'group.members.add', groupId, { related: { userId } }),
      ]);
      return publicOf<GroupMemberRecord>(store.stampForPut(userEdge));
    },

    async removeMember(ctx: RequestContext, tenantId: string, groupId: string, userId: string) {
      await readGroup(tenantId, groupId);
      checkId('userId', userId);
      await store.transactWrite([
        tx.delete(keys.groupMemberOfUser(userId, groupId), { mustExist: true, onConditionFailed: () => notFound('group member', userId) }),
        tx.delete(keys.groupMemberOfGroup(groupId, userId)),
        ...stamps.bumpUser(userId),
        audit(ctx, tenantId, 'group.members.remove', groupId, { related: { userId } }),
      ]);
      return { groupId, userId, deleted: true };
    },

    /** 002 "users of a group": one Query `GROUP#<gid>` / `USER#`. */
    async members(tenantId: string, groupId: string, opts: { limit?: number; cursor?: string } = {}): Promise<Page<GroupMemberRecord>> {
      const q = keys.groupMembers(groupId);
      // The group (tenancy check) and the page in one parallel wave.
      const [, page] = await Promise.all([readGroup(tenantId, groupId), store.query<GroupMemberRecord>({ pk: q.pk, sk: { beginsWith: q.skPrefix }, limit: opts.limit, cursor: opts.cursor })]);
      return { items: page.items.map((i) => publicOf<GroupMemberRecord>(i)), cursor: page.cursor };
    },

    /** 002 "roles of a group": one Query `GROUP#<gid>` / `ROLE#`. */
    async roles(tenantId: string, groupId: string, opts: { limit?: number; cursor?: string } = {}): Promise<Page<GroupRoleRecord>> {
      const q = keys.groupRoles(groupId);
      const [, page] = await Promise.all([readGroup(tenantId, groupId), store.query<GroupRoleRecord>({ pk: q.pk, sk: { beginsWith: q.skPrefix }, limit: opts.limit, cursor: opts.cursor })]);
      return { items: page.items.map((i) => publicOf<GroupRoleRecord>(i)), cursor: page.cursor };
    },

    /** Gives the group a role (idempotent); bumps the tenant stamp. */
    async addRole(ctx: RequestContext, tenantId: string, groupId: string, roleId: string): Promise<GroupRoleRecord> {
      checkId('roleId', roleId);
      await Promise.all([readGroup(tenantId, groupId), assignableRoles(tenantId, [roleId], 'roleIds')]);
      const existing = await store.get<GroupRoleRecord>(keys.groupRole(groupId, roleId));
      if (existing) return publicOf<GroupRoleRecord>(existing);
      const q = keys.groupRoles(groupId);
      const count = (await store.queryAll({ pk: q.pk, sk: { beginsWith: q.skPrefix } })).length;
      if (count >= MAX_GROUP_ROLES) throw validation('roleId', `A group holds at most ${MAX_GROUP_ROLES} roles`);
      const edge = roleEdge(tenantId, groupId, roleId);
      await store.transactWrite([
        tx.put(edge),
        groupExists(groupId),
        roleExists(roleId),
        ...stamps.bumpTenant(h.T, tenantId),
        audit(ctx, tenantId, 'group.roles.add', groupId, { related: { roleId } }),
      ]);
      return publicOf<GroupRoleRecord>(store.stampForPut(edge));
    },

    async removeRole(ctx: RequestContext, tenantId: string, groupId: string, roleId: string) {
      await readGroup(tenantId, groupId);
      checkId('roleId', roleId);
      await store.transactWrite([
        tx.delete(keys.groupRole(groupId, roleId), { mustExist: true, onConditionFailed: () => notFound('group role', roleId) }),
        ...stamps.bumpTenant(h.T, tenantId),
        audit(ctx, tenantId, 'group.roles.remove', groupId, { related: { roleId } }),
      ]);
      return { groupId, roleId, deleted: true };
    },

    /** 002 "groups of a user (in a location)": one Query `USER#<uid>` / `GROUP#`, filtered by scope. */
    async ofUser(tenantId: string, userId: string, scope?: ScopeRef): Promise<GroupMemberRecord[]> {
      checkId('userId', userId);
      const q = keys.groupsOfUser(userId);
      const items = await store.queryAll<GroupMemberRecord>({ pk: q.pk, sk: { beginsWith: q.skPrefix } });
      return items.filter((i) => i.tenantId === tenantId && (!scope || sameScope(i.scope, scope))).map((i) => publicOf<GroupMemberRecord>(i));
    },
  };
}
