/**
 * Roles, global (readable slug ids, platform admin) and tenant-scoped (ULIDs).
 *
 * Items: `ROLE#<id> / METADATA` (own rules + the compiled effective rules and ancestor chain), the
 * name guard `ROLE_SCOPE#<global|tid> / ROLE_NAME#<name>` (uniqueness, lookup by name, and the
 * strongly consistent listing of a scope's role tree), the tenant edge `<T>#<tid> / ROLE#<id>`, and
 * one `ROLE#<id> / PERMISSION#<key>` item per own rule (000: a role with its permissions is one Query).
 *
 * Inheritance is materialized: a check reads a role's METADATA and has every inherited rule. When a
 * role's rules or parent change, its descendants are recompiled in the same transaction; any change
 * to a subtree bumps the versions involved, so concurrent changes conflict instead of going stale.
 */
import { ulid } from 'ulid';
import { auditPut, PLATFORM_AUDIT, type AuditEvent } from '../audit/record.ts';
import type { RequestContext } from '../context.ts';
import { GatehouseError, notFound, validation, versionConflict } from '../errors.ts';
import { allShards, keys, SHARDS } from '../store/keys.ts';
import { tx, type Item, type Page, type TxAction } from '../store/store.ts';
import type { Hierarchy } from '../tenancy/model.ts';
import { checkName, preconditionFailed, publicOf, retryOnConflict, SLUG_RE, type AccessDeps } from './common.ts';
import {
  compileRole,
  MAX_ROLE_DEPTH,
  MAX_ROLE_PERMISSIONS,
  type AssignmentRecord,
  type GroupRoleRecord,
  type RoleNameRecord,
  type RoleRecord,
  type Rule,
} from './model.ts';
import type { PermissionsService } from './permissions.ts';
import { stamps } from './stamps.ts';

export interface RoleInput {
  name: string;
  description?: string;
  parentRoleId?: string;
  permissions: Rule[];
  /** Global roles only: a readable slug (`platform-admin`); otherwise a ULID is generated. */
  id?: string;
  isSystem?: boolean;
}

export interface RolePatch {
  name?: string;
  description?: string | null;
  parentRoleId?: string | null;
  permissions?: Rule[];
}

export interface RoleHolders {
  assignments: (AssignmentRecord & Item)[];
  groups: (GroupRoleRecord & Item)[];
}

export type RolesService = ReturnType<typeof createRoles>;

/** `undefined` tenant = the global scope. */
type Tenant = string | undefined;

export function createRoles({ store, hierarchy: h }: AccessDeps, permissions: PermissionsService) {
  const scopeKey = (tenantId: Tenant) => tenantId ?? 'global';
  const bump = (tenantId: Tenant) => (tenantId ? stamps.bumpTenant(h.T, tenantId) : stamps.bumpGlobal());
  const auditOf = (ctx: RequestContext, tenantId: Tenant, e: Omit<AuditEvent, 'T' | 'tenantId'>) =>
    auditPut(ctx, { ...(tenantId ? { T: h.T, tenantId } : PLATFORM_AUDIT), ...e }, store.now());
  const inScope = (r: RoleRecord, tenantId: Tenant) => (tenantId ? r.scope === 'tenant' && r.tenantId === tenantId : r.scope === 'global');

  function normalizeRules(input: unknown, field = 'permissions'): Rule[] {
    if (!Array.isArray(input)) throw validation(field, 'A list of {key, effect}');
    if (input.length > MAX_ROLE_PERMISSIONS) throw validation(field, `At most ${MAX_ROLE_PERMISSIONS} rules per role; use wildcards (module:*) or a parent role`);
    const seen = new Set<string>();
    return input.map((r: Partial<Rule>, i) => {
      if (r?.effect !== 'ALLOW' && r?.effect !== 'DENY') throw validation(`${field}[${i}].effect`, 'ALLOW or DENY');
      if (typeof r.key !== 'string') throw validation(`${field}[${i}].key`, 'Required');
      if (seen.has(r.key)) throw validation(`${field}[${i}].key`, `Duplicate rule for ${r.key}`);
      seen.add(r.key);
      return { key: r.key, effect: r.effect };
    });
  }

  function checkDescription(d: unknown) {
    if (d !== undefined && d !== null && (typeof d !== 'string' || d.length > 1000)) throw validation('description', 'At most 1000 characters');
  }

  async function read(roleId: string): Promise<RoleRecord | undefined> {
    if (typeof roleId !== 'string' || !roleId || roleId.includes('#')) return undefined;
    return store.get<RoleRecord>(keys.role(roleId));
  }

  /** A role the tenant may see: its own or a global one (global routes: global only). */
  async function readVisible(tenantId: Tenant, roleId: string): Promise<RoleRecord> {
    const r = await read(roleId);
    if (!r || (r.scope === 'tenant' && r.tenantId !== tenantId)) throw notFound('role', roleId);
    return r;
  }

  async function readOwned(tenantId: Tenant, roleId: string): Promise<RoleRecord> {
    const r = await read(roleId);
    if (!r || !inScope(r, tenantId)) throw notFound('role', roleId);
    return r;
  }

  async function readParent(tenantId: Tenant, parentRoleId: string): Promise<RoleRecord> {
    const p = await read(parentRoleId);
    if (!p || (p.scope === 'tenant' && p.tenantId !== tenantId)) {
      throw new GatehouseError('NOT_FOUND', `parentRoleId: no role ${parentRoleId}`, { entity: 'role', id: parentRoleId, errors: [{ field: 'parentRoleId', message: 'Not found' }] });
    }
    if (!inScope(p, tenantId)) throw validation('parentRoleId', tenantId ? 'A tenant role inherits from a role of the same tenant' : 'A global role inherits from a global role');
    return p;
  }

  const { metaItem, guardItem, edgeItem, ruleItem } = roleItemBuilders(h);

  const nameTaken = (name: string) => () => new GatehouseError('CONFLICT', `A role named "${name}" already exists in this scope`, { errors: [{ field: 'name', message: 'Already exists' }] });
  const guardIsOurs = (id: string) => ({ expression: '#r = :r', names: { '#r': 'roleId' }, values: { ':r': id } });

  function checkSize(actions: TxAction[]) {
    if (actions.length > 100) {
      throw new GatehouseError('TRANSACTION_TOO_LARGE', `This change touches ${actions.length} items (rules and descendant roles); DynamoDB writes at most 100 atomically. Change fewer rules at once.`, { actions: actions.length });
    }
  }

  /** Every role of the scope as a parent map (the name guards: one strongly consistent Query). */
  async function treeOf(tenantId: Tenant) {
    const q = keys.roleNamesOf(scopeKey(tenantId));
    const guards = await store.queryAll<RoleNameRecord>({ pk: q.pk, sk: { beginsWith: q.skPrefix } });
    const children = new Map<string, string[]>();
    for (const g of guards) if (g.parentRoleId) children.set(g.parentRoleId, [...(children.get(g.parentRoleId) ?? []), g.roleId]);
    return { guards, children };
  }

  /** Descendants in breadth-first order (parents before children). */
  function descendantsOf(children: Map<string, string[]>, roleId: string): string[] {
    const out: string[] = [];
    const seen = new Set([roleId]);
    for (let queue = [roleId]; queue.length; ) {
      const next: string[] = [];
      for (const id of queue) {
        for (const c of children.get(id) ?? []) {
          if (seen.has(c)) continue;
          seen.add(c);
          out.push(c);
          next.push(c);
        }
      }
      queue = next;
    }
    return out;
  }

  async function create(ctx: RequestContext, tenantId: Tenant, input: RoleInput): Promise<RoleRecord> {
    const name = checkName('name', input?.name);
    checkDescription(input.description);
    const rules = normalizeRules(input.permissions);
    let id: string;
    if (tenantId) {
      if (input.id !== undefined) throw validation('id', 'Only global roles take a chosen id');
      id = ulid();
    } else {
      if (input.id !== undefined && (typeof input.id !== 'string' || !SLUG_RE.test(input.id))) throw validation('id', 'A slug: lower-case letters, digits and -, 2-63 characters');
      id = input.id ?? ulid();
    }
    return retryOnConflict(async () => {
      const [, parent, tenant] = await Promise.all([
        permissions.assertKnown(rules),
        input.parentRoleId !== undefined && input.parentRoleId !== null ? readParent(tenantId, input.parentRoleId) : undefined,
        tenantId ? store.get(keys.tenant(h.T, tenantId)) : undefined,
      ]);
      if (tenantId && !tenant) throw notFound('tenant', tenantId);
      if (parent && parent.ancestorIds.length + 2 > MAX_ROLE_DEPTH) throw validation('parentRoleId', `Role chains are at most ${MAX_ROLE_DEPTH} deep`);
      const record = {
        id,
        scope: (tenantId ? 'tenant' : 'global') as RoleRecord['scope'],
        tenantId,
        name,
        description: input.description,
        parentRoleId: parent?.id,
        permissions: rules,
        ...compileRole(id, rules, parent),
        ...(input.isSystem ? { isSystem: true } : {}),
      };
      const meta = metaItem(record);
      const actions: TxAction[] = [
        tx.put(meta, { ifNotExists: true, onConditionFailed: () => new GatehouseError('CONFLICT', `Role ${id} already exists`, { errors: [{ field: 'id', message: 'Already exists' }] }) }),
        tx.put(guardItem(record), { ifNotExists: true, onConditionFailed: nameTaken(name) }),
        ...(tenantId ? [tx.put(edgeItem(record)), tx.check(keys.tenant(h.T, tenantId), { mustExist: true, onConditionFailed: () => notFound('tenant', tenantId) })] : []),
        ...rules.map((r) => tx.put(ruleItem(record, r))),
        // Serializes with a concurrent change of the parent's subtree (which recompiles descendants).
        ...(parent ? [tx.update(keys.role(parent.id), { expectedVersion: parent.version })] : []),
        ...bump(tenantId),
        auditOf(ctx, tenantId, { action: 'role.create', entityType: 'Role', entityId: id, after: record }),
      ];
      checkSize(actions);
      await store.transactWrite(actions);
      return publicOf<RoleRecord>(store.stampForPut(meta));
    });
  }

  async function update(ctx: RequestContext, tenantId: Tenant, roleId: string, patch: RolePatch, expectedVersion?: number): Promise<RoleRecord> {
    if (patch.name !== undefined) checkName('name', patch.name);
    checkDescription(patch.description);
    const newRules = patch.permissions !== undefined ? normalizeRules(patch.permissions) : undefined;
    if (newRules) await permissions.assertKnown(newRules);
    return retryOnConflict(async () => {
      const role = await readOwned(tenantId, roleId);
      if (expectedVersion !== undefined && role.version !== expectedVersion) throw preconditionFailed(`role ${roleId}`, expectedVersion)();
      const name = patch.name !== undefined ? checkName('name', patch.name) : role.name;
      const parentId = patch.parentRoleId === undefined ? role.parentRoleId : (patch.parentRoleId ?? undefined);
      const parentChanged = parentId !== role.parentRoleId;
      if (parentId !== undefined && (parentId === roleId)) throw validation('parentRoleId', 'A role cannot be its own parent');
      const parent = parentId ? await readParent(tenantId, parentId) : undefined;
      if (parent?.ancestorIds.includes(roleId)) throw validation('parentRoleId', `Role ${parentId} inherits from ${roleId}: this would be a cycle`);
      const rules = newRules ?? role.permissions;
      const rulesChanged = !!newRules && JSON.stringify(sortRules(newRules)) !== JSON.stringify(sortRules(role.permissions));
      const recompile = rulesChanged || parentChanged;
      const description = patch.description === null ? undefined : (patch.description ?? role.description);

      const next: RoleRecord = {
        ...publicOf<RoleRecord>(role),
        name,
        description,
        parentRoleId: parent?.id,
        permissions: rules,
        ...compileRole(roleId, rules, parent),
      };
      if (description === undefined) delete next.description;
      if (next.parentRoleId === undefined) delete next.parentRoleId;

      const actions: TxAction[] = [
        tx.put(metaItem(next), { expectedVersion: role.version, onConditionFailed: expectedVersion !== undefined ? preconditionFailed(`role ${roleId}`, expectedVersion) : () => versionConflict(`role ${roleId}`) }),
      ];
      // Descendants: recompiled with the new chain, each at the version read (a concurrent change conflicts).
      if (recompile) {
        const { children } = await treeOf(tenantId);
        const ids = descendantsOf(children, roleId);
        const found = await store.batchGet<RoleRecord>(ids.map((d) => keys.role(d)));
        const byId = new Map<string, Pick<RoleRecord, 'id' | 'ancestorIds' | 'effectivePermissions'>>([[roleId, next]]);
        for (const d of ids) {
          const rec = found.find((f) => f.id === d);
          const p = rec?.parentRoleId ? byId.get(rec.parentRoleId) : undefined;
          if (!rec || !p) continue;
          const compiled = compileRole(rec.id, rec.permissions, p);
          if (compiled.ancestorIds.length + 1 > MAX_ROLE_DEPTH) throw validation('parentRoleId', `Role chains are at most ${MAX_ROLE_DEPTH} deep (role ${rec.id} would be deeper)`);
          const recompiled = { ...publicOf<RoleRecord>(rec), ...compiled };
          byId.set(rec.id, recompiled);
          actions.push(tx.put(metaItem(recompiled), { expectedVersion: rec.version, onConditionFailed: () => versionConflict(`role ${rec.id}`) }));
        }
      }
      if (name !== role.name) {
        actions.push(tx.delete(keys.roleName(scopeKey(tenantId), role.name), { condition: guardIsOurs(roleId) }));
        actions.push(tx.put(guardItem(next), { ifNotExists: true, onConditionFailed: nameTaken(name) }));
      } else if (parentChanged) {
        actions.push(tx.put(guardItem(next), { condition: guardIsOurs(roleId), onConditionFailed: () => versionConflict(`role ${roleId}`) }));
      }
      if (tenantId && (name !== role.name || parentChanged || description !== role.description)) actions.push(tx.put(edgeItem(next)));
      if (rulesChanged) {
        const newKeys = new Map(rules.map((r) => [r.key, r.effect]));
        for (const old of role.permissions) if (!newKeys.has(old.key)) actions.push(tx.delete(keys.rolePermission(roleId, old.key)));
        const oldKeys = new Map(role.permissions.map((r) => [r.key, r.effect]));
        for (const r of rules) if (oldKeys.get(r.key) !== r.effect) actions.push(tx.put(ruleItem(next, r)));
      }
      if (parentChanged) {
        // Both the old and the new parent's subtrees change: serialize with changes to either.
        const old = role.parentRoleId ? await read(role.parentRoleId) : undefined;
        if (old) actions.push(tx.update(keys.role(old.id), { expectedVersion: old.version }));
        if (parent) actions.push(tx.update(keys.role(parent.id), { expectedVersion: parent.version }));
      }
      if (recompile) actions.push(...bump(tenantId));
      actions.push(auditOf(ctx, tenantId, { action: 'role.update', entityType: 'Role', entityId: roleId, before: role as unknown as Record<string, unknown>, after: next as unknown as Record<string, unknown> }));
      checkSize(actions);
      await store.transactWrite(actions);
      return (await readOwned(tenantId, roleId)) as RoleRecord;
    }).then((r) => publicOf<RoleRecord>(r));
  }

  /** Assignments and group → role edges holding a role (GSI1, eventually consistent: see docs). */
  async function holders(roleId: string): Promise<RoleHolders> {
    const pages = await Promise.all(allShards(SHARDS.roleHolders).map((s) => store.queryAll<Item>({ ...keys.roleHolders(roleId, s) })));
    const all = pages.flat();
    return {
      assignments: all.filter((i) => i.Type === 'Assignment') as RoleHolders['assignments'],
      groups: all.filter((i) => i.Type === 'GroupRole') as RoleHolders['groups'],
    };
  }

  /** Deletes holders in bounded transactions (≤ 100 actions), audited per tenant. */
  async function deleteHolders(ctx: RequestContext, roleId: string, hs: RoleHolders) {
    const byTenant = new Map<string, Item[]>();
    for (const i of [...hs.assignments, ...hs.groups]) byTenant.set(String(i.tenantId), [...(byTenant.get(String(i.tenantId)) ?? []), i]);
    for (const [tid, items] of byTenant) {
      for (let i = 0; i < items.length; i += 45) {
        const chunk = items.slice(i, i + 45);
        const users = new Set(chunk.filter((c) => c.Type === 'Assignment').map((c) => String(c.userId)));
        await store.transactWrite([
          ...chunk.map((c) => tx.delete({ PK: String(c.PK), SK: String(c.SK) })),
          ...[...users].flatMap((u) => stamps.bumpUser(u)),
          auditPut(ctx, { T: h.T, tenantId: tid, action: 'role.delete.cascade', entityType: 'Role', entityId: roleId, related: { assignments: chunk.filter((c) => c.Type === 'Assignment').map((c) => c.id), groups: chunk.filter((c) => c.Type === 'GroupRole').map((c) => c.groupId) } }, store.now()),
        ]);
      }
    }
  }

  async function remove(ctx: RequestContext, tenantId: Tenant, roleId: string, opts: { cascade?: boolean; expectedVersion?: number } = {}) {
    const role = await readOwned(tenantId, roleId);
    if (opts.expectedVersion !== undefined && role.version !== opts.expectedVersion) throw preconditionFailed(`role ${roleId}`, opts.expectedVersion)();
    const [{ children }, held] = await Promise.all([treeOf(tenantId), holders(roleId)]);
    const kids = children.get(roleId) ?? [];
    if (kids.length) {
      throw new GatehouseError('CONFLICT', `Role ${roleId} is the parent of ${kids.length} role(s); re-parent or delete them first`, { childRoles: kids.length, errors: [{ field: 'roleId', message: 'Has child roles' }] });
    }
    const counts = { assignments: held.assignments.length, groups: held.groups.length };
    if (!opts.cascade && counts.assignments + counts.groups > 0) {
      throw new GatehouseError('CONFLICT', `Role ${roleId} is held by ${counts.assignments} assignment(s) and ${counts.groups} group(s); revoke them or delete with cascade=true`, {
        ...counts,
        errors: [{ field: 'roleId', message: 'Still assigned' }],
      });
    }
    const actions: TxAction[] = [
      tx.delete(keys.role(roleId), { expectedVersion: role.version, onConditionFailed: opts.expectedVersion !== undefined ? preconditionFailed(`role ${roleId}`, opts.expectedVersion) : () => versionConflict(`role ${roleId}`) }),
      tx.delete(keys.roleName(scopeKey(tenantId), role.name), { condition: guardIsOurs(roleId) }),
      ...(tenantId ? [tx.delete(keys.roleOfTenant(h.T, tenantId, roleId))] : []),
      ...role.permissions.map((r) => tx.delete(keys.rolePermission(roleId, r.key))),
      ...bump(tenantId),
      auditOf(ctx, tenantId, { action: 'role.delete', entityType: 'Role', entityId: roleId, before: role as unknown as Record<string, unknown>, related: { ...counts, cascade: !!opts.cascade }, severity: 'warning' }),
    ];
    checkSize(actions);
    await store.transactWrite(actions);
    // The role is gone (and stamps bumped): holders grant nothing from here on. Remove them, and
    // look again for any the eventually consistent index had not shown yet.
    if (opts.cascade) {
      await deleteHolders(ctx, roleId, held);
      const late = await holders(roleId);
      const seen = new Set([...held.assignments, ...held.groups].map((i) => `${i.PK}|${i.SK}`));
      const extra = { assignments: late.assignments.filter((i) => !seen.has(`${i.PK}|${i.SK}`)), groups: late.groups.filter((i) => !seen.has(`${i.PK}|${i.SK}`)) };
      await deleteHolders(ctx, roleId, extra);
      counts.assignments += extra.assignments.length;
      counts.groups += extra.groups.length;
    }
    return { id: roleId, deleted: true, ...counts };
  }

  return {
    create,
    update,
    remove,
    holders,
    get: (tenantId: Tenant, roleId: string) => readVisible(tenantId, roleId).then((r) => publicOf<RoleRecord>(r)),
    /** Raw read (no tenancy check) for services that validate scope themselves. */
    read,

    /** 000 "role with permissions": one Query on `ROLE#<id>` (METADATA + PERMISSION# items). */
    async withPermissions(tenantId: Tenant, roleId: string): Promise<{ role: RoleRecord; permissions: Rule[] }> {
      const items = await store.queryAll<Item>({ pk: keys.rolePartition(roleId).pk });
      const meta = items.find((i) => i.SK === 'METADATA') as RoleRecord | undefined;
      if (!meta || (meta.scope === 'tenant' && meta.tenantId !== tenantId)) throw notFound('role', roleId);
      return { role: publicOf<RoleRecord>(meta), permissions: items.filter((i) => i.Type === 'RolePermission').map((i) => ({ key: String(i.key), effect: i.effect as Rule['effect'] })) };
    },

    /** 003 "role by scope + name": GetItem of the name guard, then GetItem of the role. */
    async byName(tenantId: Tenant, name: string): Promise<RoleRecord> {
      const guard = await store.get<RoleNameRecord>(keys.roleName(scopeKey(tenantId), name));
      if (!guard) throw notFound('role', name);
      return readOwned(tenantId, guard.roleId).then((r) => publicOf<RoleRecord>(r));
    },

    /** 000/004 "roles scoped to an account / roles of a client": one Query of the tenant's role edges. */
    async listOfTenant(tenantId: string, opts: { limit?: number; cursor?: string } = {}) {
      const q = keys.rolesOfTenant(h.T, tenantId);
      const page = await store.query<Item>({ pk: q.pk, sk: { beginsWith: q.skPrefix }, limit: opts.limit, cursor: opts.cursor });
      return { items: page.items.map((i) => publicOf<Record<string, unknown>>(i)), cursor: page.cursor };
    },

    /** Global roles (GSI1 `ENTITY#ROLE`, a listing). */
    async listGlobal(opts: { limit?: number; cursor?: string } = {}): Promise<Page<RoleRecord>> {
      const q = keys.globalRoles();
      const page = await store.query<RoleRecord>({ index: q.index, pk: q.pk, sk: { beginsWith: q.skPrefix }, limit: opts.limit, cursor: opts.cursor });
      return { items: page.items.map((i) => publicOf<RoleRecord>(i)), cursor: page.cursor };
    },

    /** 002 "pages of a role": one Query, `begins_with(SK, 'PERMISSION#page:')` (own rules). */
    async pagesOf(tenantId: Tenant, roleId: string): Promise<Rule[]> {
      const q = keys.rolePartition(roleId, 'PERMISSION#page:');
      const items = await store.queryAll<Item>({ pk: q.pk, sk: { beginsWith: q.skPrefix! } });
      if (items.some((i) => i.tenantId !== undefined && i.tenantId !== tenantId)) throw notFound('role', roleId);
      return items.map((i) => ({ key: String(i.key), effect: i.effect as Rule['effect'] }));
    },

    /** 002 "one page check" on a role's own rules: one GetItem. (The engine's check also inherits.) */
    async pageRule(roleId: string, page: string): Promise<Rule | undefined> {
      const item = await store.get<Item>(keys.rolePermission(roleId, `page:${page}`));
      return item ? { key: String(item.key), effect: item.effect as Rule['effect'] } : undefined;
    },
  };
}


/** The items of a role (also used by the bench's bulk loader). */
export function roleItemBuilders(h: Hierarchy) {
  const scopeKey = (tenantId: string | undefined) => tenantId ?? 'global';
  const metaItem = (r: Omit<RoleRecord, 'version' | 'createdAt' | 'updatedAt'> & Partial<RoleRecord>) => ({
    ...keys.role(r.id),
    ...(r.scope === 'global' ? keys.globalRoleIndex(r.id) : {}),
    Type: 'Role',
    ...stripKeys(r),
  });
  const guardItem = (r: Pick<RoleRecord, 'id' | 'name' | 'scope' | 'tenantId' | 'parentRoleId'>) => ({
    ...keys.roleName(scopeKey(r.tenantId), r.name),
    Type: 'RoleName',
    roleId: r.id,
    name: r.name,
    scope: r.scope,
    tenantId: r.tenantId,
    parentRoleId: r.parentRoleId,
  });
  const edgeItem = (r: Pick<RoleRecord, 'id' | 'name' | 'tenantId' | 'description' | 'parentRoleId'>) => ({
    ...keys.roleOfTenant(h.T, r.tenantId!, r.id),
    Type: 'TenantRole',
    roleId: r.id,
    tenantId: r.tenantId,
    name: r.name,
    description: r.description,
    parentRoleId: r.parentRoleId,
  });
  const ruleItem = (r: Pick<RoleRecord, 'id' | 'tenantId'>, rule: Rule) => ({
    ...keys.rolePermission(r.id, rule.key),
    Type: 'RolePermission',
    roleId: r.id,
    tenantId: r.tenantId,
    key: rule.key,
    effect: rule.effect,
  });
  return { metaItem, guardItem, edgeItem, ruleItem };
}

function sortRules(r: Rule[]) {
  return [...r].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function stripKeys<T extends object>(o: T): T {
  const out = { ...o } as Record<string, unknown>;
  for (const k of ['PK', 'SK', 'Type', 'GSI1PK', 'GSI1SK', 'version', 'createdAt', 'updatedAt']) delete out[k];
  // Keep createdAt across rewrites (the store keeps it only if the item carries it).
  if ((o as Record<string, unknown>).createdAt) out.createdAt = (o as Record<string, unknown>).createdAt;
  return out as T;
}
