/**
 * User ↔ scope memberships, stored both ways (002 locations, 000 workstreams), and tenant grants
 * (003), which are the memberships of the tenant node itself with a grant id and role ids. Edges
 * carry denormalized display fields (scope name/code on the user side, user name/type/e-mail on
 * the scope side) that renames keep in step. Adding or removing one bumps the user's access stamp.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ulid } from 'ulid';
import { at } from '../tenancy/clock.ts';
import { stamps } from '../access/stamps.ts';
import { auditPut } from '../audit/record.ts';
import type { RequestContext } from '../context.ts';
import { conflict, GatehouseError, notFound, validation } from '../errors.ts';
import { keys } from '../store/keys.ts';
import { tx, type Item, type Page, type Store, type TxAction } from '../store/store.ts';
import type { Hierarchy, ScopeNodeRecord, ScopeRef } from '../tenancy/model.ts';
import { nodeRecord, type PageQuery } from '../tenancy/repository.ts';
import { parse } from '../tenancy/validate.ts';
import { IdentityRepository, membershipView, type EdgeFields, type StoredUser } from './repository.ts';
import { GrantInput, type GrantView, type MembershipView } from './schema.ts';

/** Stored vs given e-mail, trimmed and lower-cased, compared in constant time (digests of equal length). */
function sameEmail(stored: unknown, given: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s.trim().toLowerCase()).digest();
  return typeof stored === 'string' && timingSafeEqual(digest(stored), digest(given));
}

const mapPage = <A, B>(p: Page<A>, f: (a: A) => B): Page<B> => ({ items: p.items.map(f), cursor: p.cursor });

export function grantView(it: Item): GrantView {
  return {
    id: String(it.tenantGrantId),
    tenantId: String(it.tenantId),
    ...(typeof it.scopeName === 'string' ? { tenantName: it.scopeName } : {}),
    userId: String(it.userId),
    ...(typeof it.userDisplayName === 'string' ? { userDisplayName: it.userDisplayName } : {}),
    ...(typeof it.userEmail === 'string' ? { userEmail: it.userEmail } : {}),
    roleIds: (it.roleIds as string[] | undefined) ?? [],
    joinedAt: String(it.joinedAt),
    version: Number(it.version),
    createdAt: String(it.createdAt),
    updatedAt: String(it.updatedAt),
  };
}

export interface ScopeTarget {
  id: string;
  /** Known kind: the scope is read with its key; otherwise every kind's key is tried (one BatchGet). */
  kind?: string;
}

export class MembershipService {
  constructor(
    private readonly repo: IdentityRepository,
    private readonly h: Hierarchy,
  ) {}

  private get store(): Store {
    return this.repo.store;
  }

  private audit(ctx: RequestContext, tenantId: string, action: string, entityId: string, e: { before?: object; after?: object; related?: Record<string, unknown> }): TxAction {
    return auditPut(ctx, { T: this.h.T, tenantId, action, entityType: 'membership', entityId, before: e.before as never, after: e.after as never, related: e.related }, this.store.now());
  }

  private scopeKeys(s: ScopeTarget) {
    if (s.kind !== undefined) {
      if (s.kind === this.h.tenantKind) throw validation('kind', `Use the ${this.h.tenantKind} grant routes for a membership of the ${this.h.tenantKind} itself`);
      const def = this.h.kinds[s.kind];
      if (!def) throw validation('kind', `Unknown kind "${s.kind}"`);
      return [keys.scopeNode(def.prefix, s.id)];
    }
    return Object.values(this.h.kinds).map((k) => keys.scopeNode(k.prefix, s.id));
  }

  /**
   * ONE BatchGetItem: the user, the scope node (under each candidate kind) and the user's grant in
   * the tenant. The user must belong to the tenant (home tenant or grant); the scope must be in it.
   */
  private async readPair(tenantId: string, scope: ScopeTarget, userId: string): Promise<{ user: StoredUser; node: ScopeNodeRecord }> {
    const grantKey = keys.membershipOfUser(userId, this.h.T, tenantId);
    const userKey = keys.user(userId);
    const items = await this.store.batchGet<Item>([userKey, grantKey, ...this.scopeKeys(scope)]);
    const user = items.find((i) => i.PK === userKey.PK && i.SK === userKey.SK) as StoredUser | undefined;
    const grant = items.find((i) => i.PK === grantKey.PK && i.SK === grantKey.SK);
    const nodeItem = items.find((i) => i.Type === 'ScopeNode');
    const node = nodeItem ? nodeRecord(nodeItem) : undefined;
    if (!node || node.tenantId !== tenantId) throw notFound(scope.kind ?? 'scope', scope.id);
    if (!user || (user.tenantId !== tenantId && !grant)) {
      throw new GatehouseError('NOT_FOUND', `No user ${userId} in this ${this.h.tenantKind}`, { entity: 'user', id: userId, errors: [{ field: 'userId', message: 'Not found in this tenant' }] });
    }
    return { user, node };
  }

  /**
   * Makes a user a member of a scope (idempotent: an existing membership is returned as is).
   * Reads: one BatchGetItem. Writes: both edges + audit + user stamp in one transaction.
   */
  async add(ctx: RequestContext, tenantId: string, scope: ScopeTarget, userId: string): Promise<{ membership: MembershipView; created: boolean }> {
    const w = at(this.store, this.store.now());
    const { user, node } = await this.readPair(tenantId, scope, userId);
    const e: EdgeFields = { tenantId, userId, scopeKind: node.kind, scopeId: node.id, joinedAt: w.now().toISOString() };
    const userEdge = this.repo.userEdge(e, { name: node.name, code: node.code });
    try {
      await w.transactWrite([
        tx.put(userEdge, { ifNotExists: true, onConditionFailed: () => conflict('userId', 'Already a member') }),
        tx.put(this.repo.scopeEdge(e, user), { ifNotExists: true, onConditionFailed: () => conflict('userId', 'Already a member') }),
        ...stamps.bumpUser(userId),
        this.audit(ctx, tenantId, `${node.kind}.member.add`, `${node.id}:${userId}`, { after: { ...e, scopeName: node.name } }),
      ]);
    } catch (err) {
      if (err instanceof GatehouseError && err.code === 'CONFLICT') {
        const existing = await this.store.get<Item>(keys.membershipOfUser(userId, this.repo.K(node.kind), node.id));
        if (existing) return { membership: membershipView(existing), created: false };
      }
      throw err;
    }
    return { membership: membershipView(w.stampForPut(userEdge)), created: true };
  }

  /** Removes a membership (404 if there is none): both edges, audit, user stamp. */
  async remove(ctx: RequestContext, tenantId: string, scope: ScopeTarget, userId: string): Promise<void> {
    const w = at(this.store, this.store.now());
    const items = await this.store.batchGet<Item>(this.scopeKeys(scope));
    const node = items[0] ? nodeRecord(items[0]) : undefined;
    if (!node || node.tenantId !== tenantId) throw notFound(scope.kind ?? 'scope', scope.id);
    const K = this.repo.K(node.kind);
    await w.transactWrite([
      tx.delete(keys.membershipOfUser(userId, K, node.id), { mustExist: true, onConditionFailed: () => notFound('membership', `${node.id}/${userId}`) }),
      tx.delete(keys.membershipOfScope(K, node.id, userId)),
      ...stamps.bumpUser(userId),
      this.audit(ctx, tenantId, `${node.kind}.member.remove`, `${node.id}:${userId}`, { related: { scope: { kind: node.kind, id: node.id }, userId } }),
    ]);
  }

  /**
   * Users of a scope (002 "users of a location"). With the kind: ONE Query `<KIND>#sid`
   * begins_with `USER#`, filtered to the tenant. Without: a BatchGet to find the kind first.
   */
  async members(tenantId: string, scope: ScopeTarget, p: PageQuery = {}): Promise<Page<MembershipView>> {
    let kind = scope.kind;
    if (kind === undefined) {
      const items = await this.store.batchGet<Item>(this.scopeKeys(scope));
      const node = items[0] ? nodeRecord(items[0]) : undefined;
      if (!node || node.tenantId !== tenantId) throw notFound('scope', scope.id);
      kind = node.kind;
    } else this.scopeKeys(scope);
    return mapPage(await this.repo.membersOfScope(kind, scope.id, { ...p, tenantId }), membershipView);
  }

  /**
   * A user's memberships in this tenant (002 "locations of a user"): ONE Query `USER#uid`
   * begins_with `<KIND>#` (or the partition filtered to memberships), kept to the tenant.
   */
  async ofUser(tenantId: string, userId: string, p: PageQuery & { kind?: string } = {}): Promise<Page<MembershipView>> {
    if (p.kind !== undefined && p.kind !== this.h.tenantKind && !this.h.kinds[p.kind]) throw validation('kind', `Unknown kind "${p.kind}"`);
    return mapPage(await this.repo.membershipsOfUser(userId, p.kind, { ...p, tenantId }), membershipView);
  }

  // ---- tenant grants (003) -------------------------------------------------------------------

  /** Role ids must name global roles or roles of this tenant (one BatchGet, same wave as the rest). */
  private checkRoles(tenantId: string, roleIds: string[], found: Item[]) {
    roleIds.forEach((rid, i) => {
      const r = found.find((x) => x.PK === keys.role(rid).PK && x.SK === keys.role(rid).SK);
      if (!r || (r.tenantId !== undefined && r.tenantId !== tenantId)) throw validation(`roleIds.${i}`, `No role ${rid} usable in this ${this.h.tenantKind}`);
    });
  }

  /**
   * Grants a user access to a tenant with roles (creating the grant, or replacing its roles).
   * Reads (one BatchGetItem): tenant, user, the current grant, the roles. Writes both edges (the
   * tenant side indexed in GSI2 by grant id), audit and the user stamp in one transaction.
   *
   * A user is named by id alone only where it is already visible: its home tenant, or a tenant
   * that holds its grant (replacing the roles). Adding a user of another tenant needs its e-mail
   * too (`input.email`, trimmed, case-insensitive), so an id learnt somewhere cannot be turned into
   * that person's e-mail and name through the grant's answer. A given e-mail is always checked.
   * A missing or wrong e-mail and an unknown id are the same 404 (`unknownUser`), before any write.
   */
  async grant(ctx: RequestContext, tenantId: string, userId: string, input: GrantInput = {}): Promise<{ grant: GrantView; created: boolean }> {
    const w = at(this.store, this.store.now());
    const { roleIds, email } = parse(GrantInput, input);
    if (new Set(roleIds).size !== roleIds.length) throw validation('roleIds', 'Duplicate role id');
    const tenantKey = keys.tenant(this.h.T, tenantId);
    const userKey = keys.user(userId);
    const edgeKey = keys.membershipOfScope(this.h.T, tenantId, userId);
    const items = await this.store.batchGet<Item>([tenantKey, userKey, edgeKey, ...roleIds.map((r) => keys.role(r))]);
    const pick = (k: { PK: string; SK: string }) => items.find((i) => i.PK === k.PK && i.SK === k.SK);
    const tenant = pick(tenantKey);
    const user = pick(userKey) as StoredUser | undefined;
    const existing = pick(edgeKey);
    if (!tenant) throw notFound(this.h.tenantKind, tenantId);
    const named = user && (email !== undefined ? sameEmail(user.email, email) : user.tenantId === tenantId || existing !== undefined);
    if (!user || !named) throw this.unknownUser(userId);
    this.checkRoles(tenantId, roleIds, items);
    const now = w.now().toISOString();
    const e: EdgeFields = {
      tenantId,
      userId,
      scopeKind: this.h.tenantKind,
      scopeId: tenantId,
      joinedAt: existing ? String(existing.joinedAt) : now,
      tenantGrantId: existing ? String(existing.tenantGrantId) : ulid(),
      roleIds,
    };
    const version = existing ? Number(existing.version) + 1 : 1;
    const scopeEdge = { ...this.repo.scopeEdge(e, user), version, ...(existing ? { createdAt: existing.createdAt } : {}) };
    const userEdge = { ...this.repo.userEdge(e, { name: String(tenant.name) }), version, ...(existing ? { createdAt: existing.createdAt } : {}) };
    const lost = () => conflict('userId', 'The grant was changed concurrently; retry');
    await w.transactWrite([
      tx.put(scopeEdge, existing ? { expectedVersion: Number(existing.version), onConditionFailed: lost } : { ifNotExists: true, onConditionFailed: lost }),
      tx.put(userEdge, existing ? {} : { ifNotExists: true, onConditionFailed: lost }),
      ...stamps.bumpUser(userId),
      this.audit(ctx, tenantId, existing ? 'grant.update' : 'grant.create', e.tenantGrantId!, {
        before: existing ? { roleIds: existing.roleIds } : undefined,
        after: { ...e },
      }),
    ]);
    return { grant: grantView({ ...w.stampForPut(scopeEdge), scopeName: tenant.name }), created: !existing };
  }

  /**
   * THE answer of a grant naming a user that does not exist, or a user of another tenant without
   * its right e-mail: one message and one body whatever the case, so the route is no oracle.
   */
  private unknownUser(userId: string): GatehouseError {
    return new GatehouseError('NOT_FOUND', `No user ${userId} to add here (a user of another ${this.h.tenantKind} is added with its e-mail)`, {
      entity: 'user',
      id: userId,
      errors: [{ field: 'userId', message: 'Not found' }],
    });
  }

  /** Removes a user's grant in a tenant (404 if none): both edges, audit, user stamp. */
  async revoke(ctx: RequestContext, tenantId: string, userId: string): Promise<void> {
    const w = at(this.store, this.store.now());
    const edgeKey = keys.membershipOfScope(this.h.T, tenantId, userId);
    await w.transactWrite([
      tx.delete(edgeKey, { mustExist: true, onConditionFailed: () => notFound('grant', `${tenantId}/${userId}`) }),
      tx.delete(keys.membershipOfUser(userId, this.h.T, tenantId)),
      ...stamps.bumpUser(userId),
      this.audit(ctx, tenantId, 'grant.delete', `${tenantId}:${userId}`, { related: { userId } }),
    ]);
  }

  /** A user's membership in a tenant: ONE GetItem `<T>#tid` / `USER#uid`. */
  async check(tenantId: string, userId: string): Promise<GrantView | undefined> {
    const it = await this.store.get<Item>(keys.membershipOfScope(this.h.T, tenantId, userId));
    return it ? grantView(it) : undefined;
  }

  /** A user's tenants: ONE Query `USER#uid` begins_with `<T>#`. */
  async tenantsOf(userId: string, p: PageQuery = {}): Promise<Page<GrantView>> {
    const q = keys.membershipsOfUser(userId, this.h.T);
    const page = await this.store.query<Item>({ pk: q.pk, sk: { beginsWith: q.skPrefix }, limit: p.limit, cursor: p.cursor });
    return mapPage(page, grantView);
  }

  /** The grants of a tenant: ONE Query `<T>#tid` begins_with `USER#`. */
  async grantsOf(tenantId: string, p: PageQuery = {}): Promise<Page<GrantView>> {
    return mapPage(await this.repo.membersOfScope(this.h.tenantKind, tenantId, p), grantView);
  }

  /** Grant by id: ONE Query on GSI2 `TENANT_GRANT#<id>` (eventually consistent, as every GSI). */
  async byId(grantId: string, tenantId?: string): Promise<GrantView | undefined> {
    const it = await this.repo.grantById(grantId);
    if (!it || (tenantId !== undefined && it.tenantId !== tenantId)) return undefined;
    return grantView(it);
  }

  /** For other modules: the scope a membership target resolves to. */
  async resolveScope(tenantId: string, s: ScopeRef): Promise<ScopeNodeRecord | undefined> {
    const items = await this.store.batchGet<Item>(this.scopeKeys(s));
    const node = items[0] ? nodeRecord(items[0]) : undefined;
    return node && node.tenantId === tenantId ? node : undefined;
  }
}
