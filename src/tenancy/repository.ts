/**
 * Store access for tenants and scope nodes: how records become items (keys from keys.ts only) and
 * the reads behind each access pattern. Every method states its DynamoDB request.
 */
import { GatehouseError } from '../errors.ts';
import { keys, METADATA } from '../store/keys.ts';
import type { Item, Page, Store } from '../store/store.ts';
import { prefixOf } from './hierarchy.ts';
import { mergedPage } from './merge.ts';
import type { Hierarchy, ScopeNodeRecord, ScopeRef, TenantRecord } from './model.ts';
import type { ScopeView, TenantView } from './schema.ts';

export const TYPES = {
  tenant: 'Tenant',
  tenantName: 'TenantName',
  node: 'ScopeNode',
  edge: 'ScopeEdge',
  code: 'ScopeCode',
} as const;

export interface PageQuery {
  limit?: number;
  cursor?: string | null;
}

export const tenantView = (it: Item | TenantRecord, kind: string): TenantView => {
  const t = it as TenantRecord;
  return { id: t.id, kind, name: t.name, status: t.status, attributes: t.attributes ?? {}, version: t.version, createdAt: t.createdAt, updatedAt: t.updatedAt };
};

export const tenantRecord = (t: TenantRecord): TenantRecord => ({
  id: t.id,
  name: t.name,
  status: t.status,
  attributes: t.attributes ?? {},
  version: t.version,
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
});

export const nodeRecord = (it: Item | ScopeNodeRecord): ScopeNodeRecord => {
  const n = it as ScopeNodeRecord;
  return {
    id: n.id,
    tenantId: n.tenantId,
    kind: n.kind,
    name: n.name,
    parentKind: n.parentKind,
    parentId: n.parentId,
    path: n.path,
    attributes: n.attributes ?? {},
    ...(n.code !== undefined ? { code: n.code } : {}),
    version: n.version,
    createdAt: n.createdAt,
    updatedAt: n.updatedAt,
  };
};
export const scopeView = (n: Item | ScopeNodeRecord): ScopeView => nodeRecord(n);

export class TenancyRepository {
  readonly T: string;
  constructor(
    readonly store: Store,
    readonly h: Hierarchy,
  ) {
    this.T = h.T;
  }

  /** Key prefix of a declared kind (or the tenant kind); VALIDATION naming `field` otherwise. */
  prefix(kind: string, field = 'kind'): string {
    const p = prefixOf(this.h, kind);
    if (!p) {
      throw new GatehouseError('VALIDATION', `${field}: unknown kind "${kind}"`, {
        errors: [{ field, message: `Unknown kind "${kind}"; this deployment declares ${[this.h.tenantKind, ...Object.keys(this.h.kinds)].join(', ')}` }],
      });
    }
    return p;
  }

  // ---- tenants ----

  tenantItem(t: TenantRecord, nameKey: string): Item {
    return { ...t, ...keys.tenant(this.T, t.id), ...keys.tenantIndex(this.T, t.id), Type: TYPES.tenant, kind: this.h.tenantKind, tenantId: t.id, nameKey };
  }

  /** The name guard also carries a copy of the tenant, so "tenant by name" is one GetItem. */
  nameGuardItem(t: TenantRecord, nameKey: string): Item {
    return { ...keys.tenantName(nameKey), Type: TYPES.tenantName, tenantId: t.id, name: t.name, tenant: tenantRecord(t) };
  }

  /** GetItem `<T>#id` / METADATA (strongly consistent). */
  async getTenant(id: string): Promise<(TenantRecord & { nameKey: string }) | undefined> {
    return this.store.get<TenantRecord & { nameKey: string }>(keys.tenant(this.T, id));
  }

  /** GetItem `TENANT_NAME#<normalized>` / METADATA: the guard's copy of the tenant. */
  async getTenantByName(nameKey: string): Promise<TenantRecord | undefined> {
    const g = await this.store.get<{ tenant: TenantRecord }>(keys.tenantName(nameKey));
    return g?.tenant;
  }

  /** Query GSI1 `ENTITY#<T>` (platform-admin listing). */
  listTenants(p: PageQuery): Promise<Page<Item>> {
    const q = keys.tenantsOfKind(this.T);
    return this.store.query({ index: q.index, pk: q.pk, limit: p.limit, cursor: p.cursor });
  }

  /** Query `<T>#<tid>` (whole partition, strongly consistent): the 000 "account with everything". */
  tenantPartition(tenantId: string, p: PageQuery): Promise<Page<Item>> {
    return this.store.query({ pk: keys.tenantPartition(this.T, tenantId).pk, limit: p.limit, cursor: p.cursor });
  }

  // ---- scope nodes ----

  treePath(n: { path: ScopeRef[]; kind: string; id: string }): string {
    return keys.treePath([...n.path, { kind: n.kind, id: n.id }].map((r) => ({ KIND: this.prefix(r.kind), id: r.id })));
  }

  nodeItem(n: ScopeNodeRecord): Item {
    const K = this.prefix(n.kind);
    const def = this.h.kinds[n.kind];
    const link = def.links?.[0];
    const linkId = link ? (n.attributes[`${link}Id`] as string | undefined) : undefined;
    return {
      ...nodeRecord(n),
      ...keys.scopeNode(K, n.id),
      ...keys.scopeNodeIndex(this.T, n.tenantId, K, n.id, n.createdAt, this.treePath(n)),
      ...(link && linkId ? keys.scopeLinkIndex(this.prefix(link), linkId, K, n.id) : {}),
      Type: TYPES.node,
    };
  }

  /** The child edge carries a copy of the node so listings need no second read. */
  edgeItem(n: ScopeNodeRecord): Item {
    return { ...nodeRecord(n), ...keys.childEdge(this.prefix(n.parentKind), n.parentId, this.prefix(n.kind), n.id), Type: TYPES.edge };
  }

  codeGuardItem(n: ScopeNodeRecord): Item {
    return { ...keys.scopeCode(this.prefix(n.kind), n.code!), Type: TYPES.code, tenantId: n.tenantId, kind: n.kind, nodeId: n.id, code: n.code, node: nodeRecord(n) };
  }

  /** GetItem `<KIND>#id` / METADATA (strongly consistent): the node and its ancestor path. */
  async getNode(kind: string, id: string): Promise<ScopeNodeRecord | undefined> {
    const it = await this.store.get<Item>(keys.scopeNode(this.prefix(kind), id));
    return it && it.Type === TYPES.node ? nodeRecord(it) : undefined;
  }

  /** A node whose kind is unknown: ONE BatchGetItem over `<KIND>#id` for every declared kind. */
  async findNode(id: string): Promise<ScopeNodeRecord | undefined> {
    const items = await this.store.batchGet<Item>(Object.values(this.h.kinds).map((k) => keys.scopeNode(k.prefix, id)));
    const node = items.find((i) => i.Type === TYPES.node);
    return node ? nodeRecord(node) : undefined;
  }

  /** GetItem `<KIND>_CODE#<code>` / METADATA: the guard's copy of the node. */
  async getByCode(kind: string, code: string): Promise<ScopeNodeRecord | undefined> {
    const g = await this.store.get<{ node: ScopeNodeRecord }>(keys.scopeCode(this.prefix(kind), code));
    return g?.node;
  }

  /** Query `<KIND>#id` begins_with `<CHILD>#` (one kind), or the partition filtered to edges. */
  children(parentKind: string, parentId: string, childKind: string | undefined, p: PageQuery): Promise<Page<Item>> {
    const c = keys.childrenOf(this.prefix(parentKind), parentId, childKind ? this.prefix(childKind, 'kind') : undefined);
    return this.store.query({
      pk: c.pk,
      sk: c.skPrefix ? { beginsWith: c.skPrefix } : undefined,
      filter: c.skPrefix ? undefined : { expression: '#t = :t', names: { '#t': 'Type' }, values: { ':t': TYPES.edge } },
      limit: p.limit,
      cursor: p.cursor,
    });
  }

  /** Query GSI1 `<T>#tid` begins_with `<KIND>#`. */
  ofKind(tenantId: string, kind: string, p: PageQuery): Promise<Page<Item>> {
    const q = keys.tenantEntities(this.T, tenantId, this.prefix(kind));
    return this.store.query({ index: q.index, pk: q.pk, sk: { beginsWith: q.skPrefix! }, limit: p.limit, cursor: p.cursor });
  }

  /** Query GSI1 `<T>#tid` (no sort-key condition): every entity of the tenant (001 "all entities of a client"). */
  entities(tenantId: string, p: PageQuery): Promise<Page<Item>> {
    const q = keys.tenantEntities(this.T, tenantId);
    return this.store.query({ index: q.index, pk: q.pk, limit: p.limit, cursor: p.cursor });
  }

  /** Query GSI5 `TREE#<T>#tid` begins_with `<path>/`: every descendant, path-sorted (pre-order). */
  descendants(tenantId: string, rootPath: string, kind: string | undefined, p: PageQuery): Promise<Page<Item>> {
    const q = keys.tree(this.T, tenantId);
    return this.store.query({
      index: q.index,
      pk: q.pk,
      sk: { beginsWith: keys.descendantsOf(rootPath) },
      filter: kind ? { expression: '#k = :k', names: { '#k': 'kind' }, values: { ':k': kind } } : undefined,
      limit: p.limit,
      cursor: p.cursor,
    });
  }

  tenantTreePath(tenantId: string): string {
    return keys.treePath([{ KIND: this.T, id: tenantId }]);
  }

  /** Query GSI2 `<LINK>#lid` begins_with `<KIND>#`, kept to the tenant (000 workstreams by enterprise). */
  linked(tenantId: string, linkKind: string, linkId: string, kind: string, p: PageQuery): Promise<Page<Item>> {
    const q = keys.linkedScopes(this.prefix(linkKind, 'linkedTo'), linkId, this.prefix(kind));
    return this.store.query({
      index: q.index,
      pk: q.pk,
      sk: { beginsWith: q.skPrefix },
      filter: { expression: '#tid = :tid', names: { '#tid': 'tenantId' }, values: { ':tid': tenantId } },
      limit: p.limit,
      cursor: p.cursor,
    });
  }

  /**
   * Recently created nodes: with a kind, one Query on GSI4 `<T>#tid` begins_with `<KIND>#` (newest
   * first, optionally since an instant); without, one wave of such Queries (one per kind) merged.
   */
  recent(tenantId: string, kind: string | undefined, since: string | undefined, p: PageQuery): Promise<Page<Item>> {
    const kinds = kind ? [kind] : Object.keys(this.h.kinds);
    const q = (k: string) => keys.recentInTenant(this.T, tenantId, this.prefix(k));
    if (kinds.length === 1) {
      const r = q(kinds[0]);
      const K = this.prefix(kinds[0]);
      return this.store.query({
        index: r.index,
        pk: r.pk,
        sk: since ? { between: [keys.recentBound(K, since), `${r.skPrefix!}\uffff`] } : { beginsWith: r.skPrefix! },
        ascending: false,
        limit: p.limit,
        cursor: p.cursor,
      });
    }
    return mergedPage(
      this.store,
      kinds.map((k) => {
        const r = q(k);
        return { id: k, index: r.index, pk: r.pk, prefix: r.skPrefix, ...(since ? { lower: keys.recentBound(this.prefix(k), since) } : {}) };
      }),
      { limit: p.limit ?? 25, cursor: p.cursor, ascending: false, skAttr: 'GSI4SK', orderBy: (it) => String(it.createdAt), binding: { recent: tenantId, since } },
    );
  }

  /**
   * What stops a node's deletion, in one wave: anything else in its partition (children, members,
   * resources, catalog items: two strongly consistent Queries either side of METADATA, limit 1)
   * and any role assignment at it (GSI2 `<KIND>#id#ASSIGNMENTS`, limit 1; eventually consistent).
   */
  async blockers(kind: string, id: string): Promise<Item[]> {
    const K = this.prefix(kind);
    const pk = keys.nodePartition(K, id).pk;
    const a = keys.assignmentsAtScope(K, id);
    const [before, after, assignments] = await Promise.all([
      this.store.query<Item>({ pk, sk: { lt: METADATA }, limit: 1 }),
      this.store.query<Item>({ pk, sk: { gt: METADATA }, limit: 1 }),
      this.store.query<Item>({ index: a.index, pk: a.pk, limit: 1 }),
    ]);
    return [...before.items, ...after.items, ...assignments.items.map((x) => ({ ...x, Type: 'Assignment' }))];
  }
}
