/**
 * Role assignments (001/004): `USER#<uid> / ROLE#<KIND>#<sid>#<roleId>`, GSI2 "who holds access at
 * a scope", GSI1 role holders. A role assigned at a scope applies there and to every descendant,
 * inside `[startAt, expiresAt)`. The URL id is the key itself, encoded (no GSI to resolve it).
 * `expiresAt` (epoch seconds) is also the TTL attribute, so DynamoDB eventually removes ended
 * assignments; the engine never honours one after its end, deleted or not.
 */
import { auditPut } from '../audit/record.ts';
import type { RequestContext } from '../context.ts';
import { GatehouseError, notFound, validation } from '../errors.ts';
import { keys, opaqueId } from '../store/keys.ts';
import { tx, type Item, type Page } from '../store/store.ts';
import type { ScopeRef, UserRecord } from '../tenancy/model.ts';
import { checkId, isoInstant, type AccessDeps } from './common.ts';
import type { AssignmentRecord, RoleRecord } from './model.ts';
import { checkedScopeKey, prefixOf, resolveScope } from './scopes.ts';
import { stamps } from './stamps.ts';

export interface AssignmentInput {
  userId: string;
  roleId: string;
  scope: ScopeRef;
  startAt?: string;
  expiresAt?: string;
}

/** The API shape: `expiresAt` is the ISO end of the window (the stored TTL is not shown). */
export interface Assignment {
  id: string;
  tenantId: string;
  userId: string;
  roleId: string;
  scope: ScopeRef;
  startAt?: string;
  expiresAt?: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export type AssignmentsService = ReturnType<typeof createAssignments>;

export function toAssignment(r: AssignmentRecord | Item): Assignment {
  const a = r as AssignmentRecord;
  return {
    id: a.id,
    tenantId: a.tenantId,
    userId: a.userId,
    roleId: a.roleId,
    scope: a.scope,
    ...(a.startAt ? { startAt: a.startAt } : {}),
    ...(a.endAt ? { expiresAt: a.endAt } : {}),
    version: a.version,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  };
}

/** The stored item of an assignment (also used by the bench's bulk loader). */
export function assignmentItem(h: AccessDeps['hierarchy'], a: { tenantId: string; userId: string; roleId: string; scope: ScopeRef; startAt?: string; endAt?: string }) {
  const KIND = prefixOf(h, a.scope.kind)!;
  const id = opaqueId.encode([a.userId, KIND, a.scope.id, a.roleId]);
  return {
    ...keys.assignment(a.userId, KIND, a.scope.id, a.roleId),
    ...keys.assignmentIndex(KIND, a.scope.id, a.userId, a.roleId),
    ...keys.roleHolderIndex(a.roleId, a.userId, `USER#${a.userId}#${KIND}#${a.scope.id}`),
    Type: 'Assignment',
    id,
    tenantId: a.tenantId,
    userId: a.userId,
    roleId: a.roleId,
    scope: a.scope,
    startAt: a.startAt,
    endAt: a.endAt,
    expiresAt: a.endAt ? Math.ceil(Date.parse(a.endAt) / 1000) : undefined,
  };
}

export function createAssignments({ store, hierarchy: h }: AccessDeps) {
  /** The key an assignment id stands for, or 404. */
  function keyOfId(assignmentId: string) {
    const parts = typeof assignmentId === 'string' && assignmentId.length <= 1024 ? opaqueId.decode(assignmentId, 4) : undefined;
    if (!parts) throw notFound('assignment', assignmentId);
    const [userId, KIND, scopeId, roleId] = parts;
    return keys.assignment(userId, KIND, scopeId, roleId);
  }

  async function readOwned(tenantId: string, assignmentId: string): Promise<AssignmentRecord> {
    const a = await store.get<AssignmentRecord>(keyOfId(assignmentId));
    if (!a || a.tenantId !== tenantId) throw notFound('assignment', assignmentId);
    return a;
  }

  return {
    async create(ctx: RequestContext, tenantId: string, input: AssignmentInput): Promise<Assignment> {
      checkId('userId', input?.userId);
      checkId('roleId', input.roleId);
      checkedScopeKey(h, input.scope);
      const startAt = input.startAt !== undefined ? isoInstant('startAt', input.startAt) : undefined;
      const endAt = input.expiresAt !== undefined ? isoInstant('expiresAt', input.expiresAt) : undefined;
      if (startAt && endAt && Date.parse(endAt) <= Date.parse(startAt)) throw validation('expiresAt', 'Must be after startAt');
      const [scope, found] = await Promise.all([
        resolveScope(store, h, tenantId, input.scope),
        store.batchGet<Item>([keys.user(input.userId), keys.membershipOfUser(input.userId, h.T, tenantId), keys.role(input.roleId)]),
      ]);
      const user = found.find((i) => i.PK === keys.user(input.userId).PK && i.SK === 'METADATA') as UserRecord | undefined;
      const grant = found.find((i) => i.PK === keys.user(input.userId).PK && i.SK !== 'METADATA');
      const role = found.find((i) => i.PK === keys.role(input.roleId).PK) as RoleRecord | undefined;
      if (!user || (user.tenantId !== tenantId && !grant)) {
        throw new GatehouseError('NOT_FOUND', `userId: no user ${input.userId} in this tenant`, { entity: 'user', id: input.userId, errors: [{ field: 'userId', message: 'Not found in this tenant' }] });
      }
      if (!role || (role.scope === 'tenant' && role.tenantId !== tenantId)) {
        throw new GatehouseError('NOT_FOUND', `roleId: no role ${input.roleId} in this tenant`, { entity: 'role', id: input.roleId, errors: [{ field: 'roleId', message: 'Not found in this tenant' }] });
      }
      const item = assignmentItem(h, { tenantId, userId: input.userId, roleId: input.roleId, scope: scope.ref, startAt, endAt });
      await store.transactWrite([
        tx.put(item, {
          ifNotExists: true,
          onConditionFailed: () => new GatehouseError('CONFLICT', `User ${input.userId} already holds role ${input.roleId} at ${scope.ref.kind} ${scope.ref.id}`, { errors: [{ field: 'roleId', message: 'Already assigned at this scope' }], id: item.id }),
        }),
        tx.check(keys.user(input.userId), { mustExist: true, onConditionFailed: () => notFound('user', input.userId) }),
        tx.check(keys.role(input.roleId), { mustExist: true, onConditionFailed: () => notFound('role', input.roleId) }),
        ...stamps.bumpUser(input.userId),
        auditPut(ctx, { T: h.T, tenantId, action: 'assignment.create', entityType: 'Assignment', entityId: item.id, after: item }, store.now()),
      ]);
      return toAssignment(store.stampForPut(item));
    },

    get: (tenantId: string, assignmentId: string) => readOwned(tenantId, assignmentId).then(toAssignment),

    /** Revokes: the very next check anywhere denies (the user's stamp moves in the same transaction). */
    async revoke(ctx: RequestContext, tenantId: string, assignmentId: string) {
      const a = await readOwned(tenantId, assignmentId);
      await store.transactWrite([
        tx.delete(keyOfId(assignmentId), {
          condition: { expression: '#t = :t', names: { '#t': 'tenantId' }, values: { ':t': tenantId } },
          onConditionFailed: () => notFound('assignment', assignmentId),
        }),
        ...stamps.bumpUser(a.userId),
        auditPut(ctx, { T: h.T, tenantId, action: 'assignment.delete', entityType: 'Assignment', entityId: assignmentId, before: a as unknown as Record<string, unknown>, severity: 'warning' }, store.now()),
      ]);
      return { id: assignmentId, deleted: true };
    },

    /** 004 "a user's roles (all, and at one scope)": one Query on `USER#<uid>` / `ROLE#[<KIND>#<sid>#]`. */
    async ofUser(tenantId: string, userId: string, opts: { scope?: ScopeRef; limit?: number; cursor?: string } = {}): Promise<Page<Assignment>> {
      checkId('userId', userId);
      const KIND = opts.scope ? (checkedScopeKey(h, opts.scope), prefixOf(h, opts.scope.kind)) : undefined;
      const q = keys.assignmentsOfUser(userId, KIND, opts.scope?.id);
      const page = await store.query<AssignmentRecord>({
        pk: q.pk,
        sk: { beginsWith: q.skPrefix },
        filter: { expression: '#t = :t', names: { '#t': 'tenantId' }, values: { ':t': tenantId } },
        limit: opts.limit,
        cursor: opts.cursor,
      });
      return { items: page.items.map(toAssignment), cursor: page.cursor };
    },

    /** 001/004 "scopes a user can access" (by assignment): the distinct scopes of its assignments. */
    async scopesOfUser(tenantId: string, userId: string): Promise<ScopeRef[]> {
      checkId('userId', userId);
      const q = keys.assignmentsOfUser(userId);
      const items = await store.queryAll<AssignmentRecord>({ pk: q.pk, sk: { beginsWith: q.skPrefix } });
      const seen = new Map<string, ScopeRef>();
      for (const a of items) if (a.tenantId === tenantId) seen.set(`${a.scope.kind}#${a.scope.id}`, a.scope);
      return [...seen.values()];
    },

    /** Who holds access at a scope (GSI2 `<KIND>#<sid>#ASSIGNMENTS`, a listing). */
    async atScope(tenantId: string, scope: ScopeRef, opts: { limit?: number; cursor?: string } = {}): Promise<Page<Assignment>> {
      const r = await resolveScope(store, h, tenantId, scope);
      const q = keys.assignmentsAtScope(r.KIND, r.ref.id);
      const page = await store.query<AssignmentRecord>({
        index: q.index,
        pk: q.pk,
        filter: { expression: '#t = :t', names: { '#t': 'tenantId' }, values: { ':t': tenantId } },
        limit: opts.limit,
        cursor: opts.cursor,
      });
      return { items: page.items.map(toAssignment), cursor: page.cursor };
    },
  };
}
