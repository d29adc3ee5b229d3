/**
 * Tenants and scope nodes: the rules and the transactions. Every mutation is ONE TransactWrite
 * holding the change, its uniqueness guards, its audit record and (where access decisions can
 * change) the version-stamp bumps. Reads state their DynamoDB requests in the repository.
 */
import { ulid } from 'ulid';
import { at } from './clock.ts';
import { stamps } from '../access/stamps.ts';
import { auditPut } from '../audit/record.ts';
import type { RequestContext } from '../context.ts';
import { conflict, GatehouseError, notFound, validation, versionConflict } from '../errors.ts';
import { keys } from '../store/keys.ts';
import { tx, type Item, type Page, type Store, type TxAction } from '../store/store.ts';
import type { Hierarchy, ScopeNodeRecord, ScopeRef, TenantRecord, TenantStatus } from './model.ts';
import { propagate } from './propagate.ts';
import { nodeRecord, scopeView, TenancyRepository, tenantView, TYPES, type PageQuery } from './repository.ts';
import {
  CreateScopeInput,
  CreateTenantInput,
  UpdateScopeInput,
  UpdateTenantInput,
  type ScopeView,
  type TenantView,
} from './schema.ts';
import { mergeAttributes, normalizeName, parse } from './validate.ts';

export interface EntityRef {
  type: string;
  id: string;
  kind?: string;
  name?: string;
  email?: string;
}

const mapPage = <A, B>(p: Page<A>, f: (a: A) => B): Page<B> => ({ items: p.items.map(f), cursor: p.cursor });

/** Throws VERSION_CONFLICT early when the caller's version is stale (the write is conditioned too). */
function checkVersion(what: string, current: number, expected: number | undefined) {
  if (expected !== undefined && current !== expected) throw versionConflict(what, expected);
}

export class TenantService {
  constructor(
    private readonly repo: TenancyRepository,
    private readonly h: Hierarchy,
  ) {}

  private get store(): Store {
    return this.repo.store;
  }

  private audit(ctx: RequestContext, tenantId: string, action: string, before?: object, after?: object): TxAction {
    return auditPut(ctx, { T: this.h.T, tenantId, action, entityType: this.h.tenantKind, entityId: tenantId, before: before as never, after: after as never }, this.store.now());
  }

  /** Creates a tenant; its name is unique (guard item in the same transaction) → 409 naming `name`. */
  async create(ctx: RequestContext, input: CreateTenantInput): Promise<TenantView> {
    const w = at(this.store, this.store.now());
    const body = parse(CreateTenantInput, input);
    const attributes = parse(this.h.tenantAttributes, body.attributes ?? {}, 'attributes');
    const now = w.now().toISOString();
    const t: TenantRecord = { id: ulid(), name: body.name, status: 'active', attributes, version: 1, createdAt: now, updatedAt: now };
    const nameKey = normalizeName(body.name);
    await w.transactWrite([
      tx.put(this.repo.tenantItem(t, nameKey), { ifNotExists: true }),
      tx.put(this.repo.nameGuardItem(t, nameKey), { ifNotExists: true, onConditionFailed: () => conflict('name', `A tenant named "${body.name}" already exists`) }),
      this.audit(ctx, t.id, `${this.h.tenantKind}.create`, undefined, t),
    ]);
    return tenantView(t, this.h.tenantKind);
  }

  /** GetItem by id; NOT_FOUND when absent. */
  async get(id: string): Promise<TenantView> {
    const t = await this.repo.getTenant(id);
    if (!t) throw notFound(this.h.tenantKind, id);
    return tenantView(t, this.h.tenantKind);
  }

  async find(id: string): Promise<TenantView | undefined> {
    const t = await this.repo.getTenant(id);
    return t ? tenantView(t, this.h.tenantKind) : undefined;
  }

  /** One GetItem on the name guard (it carries a copy of the tenant). */
  async getByName(name: string): Promise<TenantView | undefined> {
    const t = await this.repo.getTenantByName(normalizeName(name));
    return t ? tenantView(t, this.h.tenantKind) : undefined;
  }

  /** All tenants (platform admin): GSI1 `ENTITY#<T>`, paginated. */
  async list(p: PageQuery = {}): Promise<Page<TenantView>> {
    return mapPage(await this.repo.listTenants(p), (it) => tenantView(it, this.h.tenantKind));
  }

  /** Renames (moving the name guard atomically) and/or merge-patches attributes. */
  async update(ctx: RequestContext, id: string, input: UpdateTenantInput, expectedVersion?: number): Promise<TenantView> {
    const body = parse(UpdateTenantInput, input);
    const cur = await this.repo.getTenant(id);
    if (!cur) throw notFound(this.h.tenantKind, id);
    checkVersion(`${this.h.tenantKind} ${id}`, cur.version, expectedVersion);
    const attributes = body.attributes ? parse(this.h.tenantAttributes, mergeAttributes(cur.attributes ?? {}, body.attributes), 'attributes') : (cur.attributes ?? {});
    const name = body.name ?? cur.name;
    const next = await this.write(ctx, cur, { name, attributes }, `${this.h.tenantKind}.update`);
    if (name !== cur.name) await this.propagateName(id, name);
    return next;
  }

  async suspend(ctx: RequestContext, id: string, expectedVersion?: number): Promise<TenantView> {
    return this.setStatus(ctx, id, 'suspended', expectedVersion);
  }

  async reactivate(ctx: RequestContext, id: string, expectedVersion?: number): Promise<TenantView> {
    return this.setStatus(ctx, id, 'active', expectedVersion);
  }

  private async setStatus(ctx: RequestContext, id: string, status: TenantStatus, expectedVersion?: number): Promise<TenantView> {
    const cur = await this.repo.getTenant(id);
    if (!cur) throw notFound(this.h.tenantKind, id);
    checkVersion(`${this.h.tenantKind} ${id}`, cur.version, expectedVersion);
    if (cur.status === status) return tenantView(cur, this.h.tenantKind);
    // A suspended tenant's users are denied: the tenant stamp moves in the same transaction.
    return this.write(ctx, cur, { status }, status === 'suspended' ? `${this.h.tenantKind}.suspend` : `${this.h.tenantKind}.reactivate`, stamps.bumpTenant(this.h.T, id));
  }

  /** Replaces the tenant at version+1 and keeps the name guard's copy in step (moving it on rename). */
  private async write(ctx: RequestContext, cur: TenantRecord & { nameKey: string }, change: Partial<TenantRecord>, action: string, extra: TxAction[] = []): Promise<TenantView> {
    const w = at(this.store, this.store.now());
    const { nameKey: oldKey, ...curRecord } = cur;
    const next: TenantRecord = {
      id: cur.id,
      name: change.name ?? cur.name,
      status: change.status ?? cur.status,
      attributes: change.attributes ?? cur.attributes ?? {},
      version: cur.version + 1,
      createdAt: cur.createdAt,
      updatedAt: w.now().toISOString(),
    };
    const newKey = normalizeName(next.name);
    const ownGuard = { expression: '#tid = :tid', names: { '#tid': 'tenantId' }, values: { ':tid': cur.id } };
    const guards =
      newKey === oldKey
        ? [tx.put(this.repo.nameGuardItem(next, newKey), { condition: ownGuard })]
        : [
            tx.delete(keys.tenantName(oldKey), { condition: ownGuard }),
            tx.put(this.repo.nameGuardItem(next, newKey), { ifNotExists: true, onConditionFailed: () => conflict('name', `A tenant named "${next.name}" already exists`) }),
          ];
    await w.transactWrite([
      tx.put(this.repo.tenantItem(next, newKey), { expectedVersion: cur.version, what: `${this.h.tenantKind} ${cur.id}` }),
      ...guards,
      this.audit(ctx, cur.id, action, curRecord, next),
      ...extra,
    ]);
    return tenantView(next, this.h.tenantKind);
  }

  /** The tenant's name is shown on its grants' user-side edges. */
  private async propagateName(tenantId: string, name: string) {
    const m = keys.membersOfScope(this.h.T, tenantId);
    const members = await this.store.queryAll<Item>({ pk: m.pk, sk: { beginsWith: m.skPrefix } });
    await propagate(this.store, members.map((e) => keys.membershipOfUser(String(e.userId), this.h.T, tenantId)), { scopeName: name });
  }

  /**
   * 001 "all entities of a client": ONE Query on GSI1 `<T>#tid` — scope nodes, users, groups,
   * each as `{type, id, kind?, name?, email?}`.
   */
  async entities(id: string, p: PageQuery = {}): Promise<Page<EntityRef>> {
    return mapPage(await this.repo.entities(id, p), (it) => ({
      type: String(it.Type),
      id: String(it.id),
      ...(typeof it.kind === 'string' ? { kind: it.kind } : {}),
      ...(typeof it.name === 'string' ? { name: it.name } : {}),
      ...(typeof it.email === 'string' ? { email: it.email } : {}),
    }));
  }

  /**
   * 000 "account with its addresses, tech users, licenses, workstreams": ONE Query of the tenant's
   * partition, grouped by item type.
   */
  async overview(id: string, p: PageQuery = {}) {
    const page = await this.repo.tenantPartition(id, { limit: p.limit ?? 100, cursor: p.cursor });
    const out = {
      tenant: undefined as TenantView | undefined,
      addresses: [] as Item[],
      techUsers: [] as Item[],
      licenses: [] as Item[],
      children: {} as Record<string, ScopeView[]>,
      members: [] as Item[],
      other: 0,
      cursor: page.cursor,
    };
    for (const it of page.items) {
      if (it.Type === TYPES.tenant) out.tenant = tenantView(it, this.h.tenantKind);
      else if (it.Type === 'Address') out.addresses.push(it);
      else if (it.Type === 'TechUser') out.techUsers.push(it);
      else if (it.Type === 'License') out.licenses.push(it);
      else if (it.Type === TYPES.edge) (out.children[String(it.kind)] ??= []).push(scopeView(it));
      else if (it.Type === 'Member') out.members.push(it);
      else out.other++;
    }
    if (!p.cursor && !out.tenant) throw notFound(this.h.tenantKind, id);
    return out;
  }
}

export interface ScopeGetOptions {
  /** The node's kind when known: one GetItem; otherwise one BatchGetItem over every kind. */
  kind?: string;
}

export class ScopeService {
  constructor(
    private readonly repo: TenancyRepository,
    private readonly h: Hierarchy,
  ) {}

  private get store(): Store {
    return this.repo.store;
  }

  private audit(ctx: RequestContext, n: ScopeNodeRecord, action: string, before?: object, after?: object): TxAction {
    return auditPut(ctx, { T: this.h.T, tenantId: n.tenantId, action, entityType: n.kind, entityId: n.id, before: before as never, after: after as never }, this.store.now());
  }

  private codeOf(kind: string, attributes: Record<string, unknown>): string | undefined {
    const attr = this.h.kinds[kind].uniqueCode;
    return attr ? String(attributes[attr]).trim().toUpperCase() : undefined;
  }

  private codeConflict(kind: string, code: string) {
    return conflict(`attributes.${this.h.kinds[kind].uniqueCode}`, `A ${kind} with code "${code}" already exists`);
  }

  /** Reads the node a link attribute names; it must be of the linked kind and in the tenant. */
  private async checkLink(tenantId: string, kind: string, attributes: Record<string, unknown>) {
    const link = this.h.kinds[kind].links?.[0];
    if (!link) return;
    const linkId = attributes[`${link}Id`];
    if (linkId === undefined) return;
    const target = await this.repo.getNode(link, String(linkId));
    if (!target || target.tenantId !== tenantId) throw validation(`attributes.${link}Id`, `No ${link} ${String(linkId)} in this ${this.h.tenantKind}`);
  }

  /**
   * Creates a node under a parent of the declared parent kind in the same tenant (the tenant itself
   * for top-level kinds). Reads: the parent (GetItem) and a linked node, in one wave. Writes, in one
   * transaction: the node, the child edge, the unique-code guard, the audit record.
   */
  async create(ctx: RequestContext, tenantId: string, input: CreateScopeInput): Promise<ScopeView> {
    const w = at(this.store, this.store.now());
    const body = parse(CreateScopeInput, input);
    this.repo.prefix(body.kind);
    const def = this.h.kinds[body.kind];
    if (!def) throw validation('kind', `"${body.kind}" is the ${this.h.tenantKind} kind; create ${this.h.tenantKind}s through /v1/tenants`);
    const attributes = parse(def.attributes, body.attributes ?? {}, 'attributes');

    const parentIsTenant = def.parent === this.h.tenantKind;
    let parentId = body.parentId;
    if (parentIsTenant) {
      if (parentId !== undefined && parentId !== tenantId) {
        throw validation('parentId', `A ${body.kind} sits directly under its ${this.h.tenantKind}: omit parentId or pass the ${this.h.tenantKind} id`);
      }
      parentId = tenantId;
    } else if (parentId === undefined) {
      throw validation('parentId', `A ${body.kind} needs a parent ${def.parent}: pass its id as parentId`);
    }

    const [parent] = await Promise.all([
      parentIsTenant ? this.repo.getTenant(tenantId) : this.repo.getNode(def.parent, parentId!),
      this.checkLink(tenantId, body.kind, attributes),
    ]);
    let path: ScopeRef[];
    if (parentIsTenant) {
      if (!parent) throw notFound(this.h.tenantKind, tenantId);
      path = [{ kind: this.h.tenantKind, id: tenantId }];
    } else {
      const p = parent as ScopeNodeRecord | undefined;
      if (!p || p.tenantId !== tenantId) await this.explainMissingParent(tenantId, body.kind, parentId!);
      path = [...p!.path, { kind: p!.kind, id: p!.id }];
    }

    const now = w.now().toISOString();
    const code = this.codeOf(body.kind, attributes);
    const n: ScopeNodeRecord = {
      id: ulid(),
      tenantId,
      kind: body.kind,
      name: body.name,
      parentKind: def.parent,
      parentId: parentId!,
      path,
      attributes,
      ...(code !== undefined ? { code } : {}),
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    await w.transactWrite([
      tx.put(this.repo.nodeItem(n), { ifNotExists: true }),
      tx.put(this.repo.edgeItem(n), { ifNotExists: true }),
      ...(code !== undefined ? [tx.put(this.repo.codeGuardItem(n), { ifNotExists: true, onConditionFailed: () => this.codeConflict(n.kind, code) })] : []),
      this.audit(ctx, n, `${n.kind}.create`, undefined, n),
    ]);
    return scopeView(n);
  }

  /** Failure path only: tells "a node of the wrong kind" (400) from "no such node here" (404). */
  private async explainMissingParent(tenantId: string, kind: string, parentId: string): Promise<never> {
    const expected = this.h.kinds[kind].parent;
    const other = await this.repo.findNode(parentId);
    if (other && other.tenantId === tenantId) {
      throw validation('parentId', `${parentId} is a ${other.kind}; the parent of a ${kind} must be a ${expected}`);
    }
    if (!other && parentId === tenantId) throw validation('parentId', `The parent of a ${kind} must be a ${expected}, not the ${this.h.tenantKind}`);
    throw new GatehouseError('NOT_FOUND', `No ${expected} ${parentId} in this ${this.h.tenantKind}`, {
      entity: expected,
      id: parentId,
      errors: [{ field: 'parentId', message: `No ${expected} ${parentId} in this ${this.h.tenantKind}` }],
    });
  }

  /** The node (with its path) if it is in `tenantId`; GetItem with a kind, else one BatchGetItem. */
  async find(tenantId: string, id: string, o: ScopeGetOptions = {}): Promise<ScopeNodeRecord | undefined> {
    if (o.kind !== undefined && !this.h.kinds[o.kind]) {
      this.repo.prefix(o.kind);
      // The tenant itself is not a scope node (GET /v1/tenants/{id}).
      return undefined;
    }
    const n = o.kind ? await this.repo.getNode(o.kind, id) : await this.repo.findNode(id);
    return n && n.tenantId === tenantId ? n : undefined;
  }

  async get(tenantId: string, id: string, o: ScopeGetOptions = {}): Promise<ScopeView> {
    const n = await this.find(tenantId, id, o);
    if (!n) throw notFound(o.kind ?? 'scope', id);
    return scopeView(n);
  }

  /** Code → node: ONE GetItem on the code guard (it carries a copy of the node). */
  async getByCode(tenantId: string, code: string, kind?: string): Promise<ScopeView | undefined> {
    const coded = Object.values(this.h.kinds).filter((k) => k.uniqueCode);
    const def = kind ? this.h.kinds[kind] : coded.length === 1 ? coded[0] : undefined;
    if (kind && !def) this.repo.prefix(kind);
    if (!def?.uniqueCode) throw validation(kind ? 'kind' : 'code', kind ? `Kind ${kind} has no unique code` : 'Name the kind whose code this is');
    const n = await this.repo.getByCode(def.name, code.trim().toUpperCase());
    return n && n.tenantId === tenantId ? scopeView(n) : undefined;
  }

  /** Children of a node (or of the tenant when `parentId` is the tenant id): one Query. */
  async children(tenantId: string, parentId: string, o: ScopeGetOptions & PageQuery & { childKind?: string } = {}): Promise<Page<ScopeView>> {
    let parentKind: string;
    if (parentId === tenantId) {
      if (!(await this.repo.getTenant(tenantId))) throw notFound(this.h.tenantKind, tenantId);
      parentKind = this.h.tenantKind;
    } else {
      const n = await this.find(tenantId, parentId, o);
      if (!n) throw notFound(o.kind ?? 'scope', parentId);
      parentKind = n.kind;
    }
    return this.childrenOf(parentKind, parentId, o);
  }

  /** Children of a node whose kind is known: exactly one Query, no prior read. */
  async childrenOf(parentKind: string, parentId: string, o: PageQuery & { childKind?: string } = {}): Promise<Page<ScopeView>> {
    if (o.childKind !== undefined) this.repo.prefix(o.childKind, 'kind');
    return mapPage(await this.repo.children(parentKind, parentId, o.childKind, o), scopeView);
  }

  /** All nodes of a kind in a tenant: GSI1 `<T>#tid` begins_with `<KIND>#`. */
  async ofKind(tenantId: string, kind: string, p: PageQuery = {}): Promise<Page<ScopeView>> {
    if (!this.h.kinds[kind]) this.repo.prefix(kind);
    return mapPage(await this.repo.ofKind(tenantId, kind, p), scopeView);
  }

  /** Every node of a tenant in tree order: GSI5 begins_with `<T>#tid/`. */
  async tree(tenantId: string, p: PageQuery & { kind?: string } = {}): Promise<Page<ScopeView>> {
    return mapPage(await this.repo.descendants(tenantId, this.repo.tenantTreePath(tenantId), p.kind, p), scopeView);
  }

  /** Every descendant of a node: one paginated Query on GSI5 (begins_with its path + '/'), never a walk. */
  async descendants(tenantId: string, id: string, o: ScopeGetOptions & PageQuery & { descendantKind?: string } = {}): Promise<Page<ScopeView>> {
    if (id === tenantId) return this.tree(tenantId, { ...o, kind: o.descendantKind });
    const n = await this.find(tenantId, id, o);
    if (!n) throw notFound(o.kind ?? 'scope', id);
    return this.descendantsOf(n, o);
  }

  /** Descendants of a node already read: exactly one Query. */
  async descendantsOf(n: ScopeNodeRecord, o: PageQuery & { descendantKind?: string } = {}): Promise<Page<ScopeView>> {
    return mapPage(await this.repo.descendants(n.tenantId, this.repo.treePath(n), o.descendantKind, o), scopeView);
  }

  /** Nodes of `kind` linked to a node (000 workstreams by enterprise): GSI2 `<LINK>#id` begins_with `<KIND>#`. */
  async linked(tenantId: string, kind: string, linkId: string, p: PageQuery = {}): Promise<Page<ScopeView>> {
    const def = this.h.kinds[kind];
    if (!def) this.repo.prefix(kind);
    const link = def.links?.[0];
    if (!link) throw validation('linkedTo', `A ${kind} is not linked to another kind`);
    return mapPage(await this.repo.linked(tenantId, link, linkId, kind, p), scopeView);
  }

  /** Recently created nodes, newest first (GSI4; one Query with a kind, one wave without). */
  async recent(tenantId: string, o: PageQuery & { kind?: string; since?: string } = {}): Promise<Page<ScopeView>> {
    if (o.kind !== undefined && !this.h.kinds[o.kind]) this.repo.prefix(o.kind);
    return mapPage(await this.repo.recent(tenantId, o.kind, o.since, o), scopeView);
  }

  /**
   * Renames and/or merge-patches attributes (validated against the kind's schema) at
   * `expectedVersion`. Node, child edge and code guard change together; a code change moves the
   * guard. Member edges pick up a new name/code afterwards (bounded transactions).
   */
  async update(ctx: RequestContext, tenantId: string, id: string, input: UpdateScopeInput, expectedVersion?: number, o: ScopeGetOptions = {}): Promise<ScopeView> {
    const w = at(this.store, this.store.now());
    const body = parse(UpdateScopeInput, input);
    const cur = await this.find(tenantId, id, o);
    if (!cur) throw notFound(o.kind ?? 'scope', id);
    checkVersion(`${cur.kind} ${id}`, cur.version, expectedVersion);
    const def = this.h.kinds[cur.kind];
    const attributes = body.attributes ? parse(def.attributes, mergeAttributes(cur.attributes, body.attributes), 'attributes') : cur.attributes;
    const link = def.links?.[0];
    if (link && attributes[`${link}Id`] !== cur.attributes[`${link}Id`]) await this.checkLink(tenantId, cur.kind, attributes);
    const code = this.codeOf(cur.kind, attributes);
    const next: ScopeNodeRecord = {
      ...cur,
      name: body.name ?? cur.name,
      attributes,
      ...(code !== undefined ? { code } : {}),
      version: cur.version + 1,
      updatedAt: w.now().toISOString(),
    };
    const ownGuard = { expression: '#nid = :nid', names: { '#nid': 'nodeId' }, values: { ':nid': cur.id } };
    const guards: TxAction[] = [];
    if (code !== undefined) {
      if (code === cur.code) guards.push(tx.put(this.repo.codeGuardItem(next), { condition: ownGuard }));
      else {
        guards.push(tx.delete(keys.scopeCode(this.repo.prefix(cur.kind), cur.code!), { condition: ownGuard }));
        guards.push(tx.put(this.repo.codeGuardItem(next), { ifNotExists: true, onConditionFailed: () => this.codeConflict(cur.kind, code) }));
      }
    }
    await w.transactWrite([
      tx.put(this.repo.nodeItem(next), { expectedVersion: cur.version, what: `${cur.kind} ${cur.id}` }),
      tx.put(this.repo.edgeItem(next), { mustExist: true }),
      ...guards,
      this.audit(ctx, next, `${cur.kind}.update`, cur, next),
    ]);
    if (next.name !== cur.name || next.code !== cur.code) await this.propagateDisplay(next);
    return scopeView(next);
  }

  /** A node's name and code are shown on its members' user-side edges. */
  private async propagateDisplay(n: ScopeNodeRecord) {
    const K = this.repo.prefix(n.kind);
    const m = keys.membersOfScope(K, n.id);
    const members = await this.store.queryAll<Item>({ pk: m.pk, sk: { beginsWith: m.skPrefix } });
    await propagate(
      this.store,
      members.map((e) => keys.membershipOfUser(String(e.userId), K, n.id)),
      { scopeName: n.name, ...(n.code !== undefined ? { scopeCode: n.code } : {}) },
    );
  }

  /**
   * Deletes a leaf node at `expectedVersion`. Refused (409) while it has children, members,
   * resources, catalog items or role assignments. The assignment probe reads GSI2 (eventually
   * consistent): an assignment made in the last instant may be missed. Bumps the tenant stamp.
   */
  async delete(ctx: RequestContext, tenantId: string, id: string, expectedVersion?: number, o: ScopeGetOptions = {}): Promise<void> {
    const w = at(this.store, this.store.now());
    const cur = await this.find(tenantId, id, o);
    if (!cur) throw notFound(o.kind ?? 'scope', id);
    checkVersion(`${cur.kind} ${id}`, cur.version, expectedVersion);
    const blockers = await this.repo.blockers(cur.kind, cur.id);
    if (blockers.length) {
      const b = blockers[0];
      const byType: Record<string, string> = { [TYPES.edge]: 'children', Member: 'members', Assignment: 'assignments', Address: 'resources', TechUser: 'resources', Tool: 'resources', ScopeProduct: 'catalog', ScopeService: 'catalog' };
      const what = byType[String(b.Type)] ?? 'items';
      throw conflict(what, `This ${cur.kind} still has ${what.replace('catalog', 'catalog assignments')}; remove them first`, { blockedBy: what });
    }
    const K = this.repo.prefix(cur.kind);
    await w.transactWrite([
      tx.delete(keys.scopeNode(K, cur.id), { expectedVersion: cur.version, what: `${cur.kind} ${cur.id}` }),
      tx.delete(keys.childEdge(this.repo.prefix(cur.parentKind), cur.parentId, K, cur.id)),
      ...(cur.code !== undefined
        ? [tx.delete(keys.scopeCode(K, cur.code), { condition: { expression: '#nid = :nid', names: { '#nid': 'nodeId' }, values: { ':nid': cur.id } } })]
        : []),
      ...stamps.bumpTenant(this.h.T, tenantId),
      this.audit(ctx, cur, `${cur.kind}.delete`, cur),
    ]);
  }

  /** The raw record (the access engine's contract shape). */
  async record(tenantId: string, ref: ScopeRef): Promise<ScopeNodeRecord | undefined> {
    return this.find(tenantId, ref.id, { kind: ref.kind });
  }
}

export { nodeRecord };
