/**
 * The platform catalog (000): products and services (platform-level items, GSI1 `ENTITY#PRODUCT`
 * / `ENTITY#SERVICE`), and their assignment to scope nodes of a catalog kind (enterprise). An
 * assignment lives under the node (`ENTERPRISE#eid` / `PRODUCT#pid`), so "an enterprise with its
 * products and services" is one Query; GSI2 `PRODUCT#pid` lists the scopes holding an item.
 */
import { ulid } from 'ulid';
import { at } from './clock.ts';
import { auditPut, PLATFORM_AUDIT } from '../audit/record.ts';
import type { RequestContext } from '../context.ts';
import { conflict, notFound, validation, versionConflict } from '../errors.ts';
import { keys } from '../store/keys.ts';
import { tx, type Item, type Page } from '../store/store.ts';
import type { Hierarchy, ScopeNodeRecord } from './model.ts';
import { propagate } from './propagate.ts';
import { nodeRecord, scopeView, TenancyRepository, type PageQuery } from './repository.ts';
import {
  CreateCatalogItemInput,
  UpdateCatalogItemInput,
  type CatalogAssignmentView,
  type CatalogItemView,
  type ScopeView,
} from './schema.ts';
import { parse } from './validate.ts';

export type CatalogItemType = 'product' | 'service';

const DEF = {
  product: {
    Type: 'Product',
    EdgeType: 'ScopeProduct',
    key: keys.product,
    index: keys.productIndex,
    all: keys.productsAll,
    edge: keys.ownerProduct,
    edgeIndex: keys.ownerProductIndex,
    owners: keys.ownersOfProduct,
  },
  service: {
    Type: 'Service',
    EdgeType: 'ScopeService',
    key: keys.service,
    index: keys.serviceIndex,
    all: keys.servicesAll,
    edge: keys.ownerService,
    edgeIndex: keys.ownerServiceIndex,
    owners: keys.ownersOfService,
  },
} as const;

export const catalogItemView = (it: Item): CatalogItemView => ({
  id: String(it.id),
  name: String(it.name),
  ...(it.description !== undefined ? { description: String(it.description) } : {}),
  ...(it.sku !== undefined ? { sku: String(it.sku) } : {}),
  // Items created by another module (entitlements) may carry no status.
  status: (it.status ?? 'active') as CatalogItemView['status'],
  version: Number(it.version),
  createdAt: String(it.createdAt),
  updatedAt: String(it.updatedAt),
});

export const assignmentView = (it: Item): CatalogAssignmentView => ({
  tenantId: String(it.tenantId),
  scope: { kind: String(it.scopeKind), id: String(it.scopeId) },
  itemType: it.itemType as CatalogItemType,
  itemId: String(it.itemId),
  itemName: String(it.itemName),
  assignedAt: String(it.assignedAt),
  version: Number(it.version),
  createdAt: String(it.createdAt),
  updatedAt: String(it.updatedAt),
});

export class CatalogService {
  constructor(
    private readonly repo: TenancyRepository,
    private readonly h: Hierarchy,
  ) {}

  private get store() {
    return this.repo.store;
  }

  private platformAudit(ctx: RequestContext, type: CatalogItemType, action: string, id: string, before?: object, after?: object) {
    return auditPut(ctx, { ...PLATFORM_AUDIT, action: `${type}.${action}`, entityType: type, entityId: id, before: before as never, after: after as never }, this.store.now());
  }

  async create(ctx: RequestContext, type: CatalogItemType, input: unknown): Promise<CatalogItemView> {
    const w = at(this.store, this.store.now());
    const body = parse(CreateCatalogItemInput, input);
    const d = DEF[type];
    const id = ulid();
    const now = w.now().toISOString();
    const item = { ...d.key(id), ...d.index(id), Type: d.Type, id, ...body, version: 1, createdAt: now, updatedAt: now };
    await w.transactWrite([tx.put(item, { ifNotExists: true }), this.platformAudit(ctx, type, 'create', id, undefined, catalogItemView(item))]);
    return catalogItemView(item);
  }

  /** GetItem `PRODUCT#id` / METADATA. */
  async get(type: CatalogItemType, id: string): Promise<CatalogItemView> {
    const it = await this.store.get<Item>(DEF[type].key(id));
    if (!it) throw notFound(type, id);
    return catalogItemView(it);
  }

  /** Query GSI1 `ENTITY#PRODUCT` (000 "all products"). */
  async list(type: CatalogItemType, p: PageQuery = {}): Promise<Page<CatalogItemView>> {
    const q = DEF[type].all();
    const page = await this.store.query<Item>({ index: q.index, pk: q.pk, limit: p.limit, cursor: p.cursor });
    return { items: page.items.map(catalogItemView), cursor: page.cursor };
  }

  /** Patches at `expectedVersion`; a rename reaches the assignments (via GSI2, afterwards). */
  async update(ctx: RequestContext, type: CatalogItemType, id: string, input: unknown, expectedVersion?: number): Promise<CatalogItemView> {
    const w = at(this.store, this.store.now());
    const patch = parse(UpdateCatalogItemInput, input);
    const d = DEF[type];
    const cur = await this.store.get<Item>(d.key(id));
    if (!cur) throw notFound(type, id);
    if (expectedVersion !== undefined && cur.version !== expectedVersion) throw versionConflict(`${type} ${id}`, expectedVersion);
    const next = { ...cur, ...patch };
    await w.transactWrite([
      tx.put(next, { expectedVersion: Number(cur.version), what: `${type} ${id}` }),
      this.platformAudit(ctx, type, 'update', id, catalogItemView(cur), catalogItemView(next)),
    ]);
    if (next.name !== cur.name) {
      // GSI2 `PRODUCT#pid` also lists licenses of the product: only assignments carry the name.
      const owners = await this.store.queryAll<Item>({ index: d.owners(id).index, pk: d.owners(id).pk, filter: { expression: '#t = :t', names: { '#t': 'Type' }, values: { ':t': d.EdgeType } } });
      await propagate(this.store, owners.map((o) => ({ PK: String(o.PK), SK: String(o.SK) })), { itemName: next.name });
    }
    return catalogItemView(w.stampForPut(next, { expectedVersion: Number(cur.version) }));
  }

  /** Refused (409) while assigned to a scope (GSI2 probe: eventually consistent). */
  async delete(ctx: RequestContext, type: CatalogItemType, id: string, expectedVersion?: number): Promise<void> {
    const w = at(this.store, this.store.now());
    const d = DEF[type];
    const [cur, owners] = await Promise.all([this.store.get<Item>(d.key(id)), this.store.query<Item>({ index: d.owners(id).index, pk: d.owners(id).pk, limit: 1 })]);
    if (!cur) throw notFound(type, id);
    if (expectedVersion !== undefined && cur.version !== expectedVersion) throw versionConflict(`${type} ${id}`, expectedVersion);
    if (owners.items.length) throw conflict('assignments', `This ${type} is still assigned to a scope or licensed; remove those first`, { blockedBy: 'assignments' });
    await w.transactWrite([
      tx.delete(d.key(id), { expectedVersion: Number(cur.version), what: `${type} ${id}` }),
      this.platformAudit(ctx, type, 'delete', id, catalogItemView(cur)),
    ]);
  }

  /** The catalog node a scope id names (a kind with `catalog: true`), in the tenant. */
  private async catalogNode(tenantId: string, scopeId: string, kind?: string): Promise<ScopeNodeRecord> {
    const kinds = Object.values(this.h.kinds).filter((k) => k.catalog);
    const def = kind ? this.h.kinds[kind] : kinds.length === 1 ? kinds[0] : undefined;
    if (kind && !def) this.repo.prefix(kind);
    const node = def ? await this.repo.getNode(def.name, scopeId) : await this.repo.findNode(scopeId);
    if (!node || node.tenantId !== tenantId) throw notFound(kind ?? 'scope', scopeId);
    if (!this.h.kinds[node.kind].catalog) throw validation('scopeId', `A ${node.kind} holds no products or services`);
    return node;
  }

  /** Assigns a product/service to a catalog node (idempotent). Reads node + item in one wave. */
  async assign(ctx: RequestContext, tenantId: string, scopeId: string, type: CatalogItemType, itemId: string, kind?: string): Promise<{ assignment: CatalogAssignmentView; created: boolean }> {
    const w = at(this.store, this.store.now());
    const d = DEF[type];
    const [node, item] = await Promise.all([this.catalogNode(tenantId, scopeId, kind), this.store.get<Item>(d.key(itemId))]);
    if (!item) throw notFound(type, itemId);
    if (item.status === 'retired') throw validation(`${type}Id`, `${type} ${itemId} is retired`);
    const K = this.repo.prefix(node.kind);
    const now = w.now().toISOString();
    const edge = {
      ...d.edge(K, node.id, itemId),
      ...d.edgeIndex(itemId, K, node.id),
      Type: d.EdgeType,
      tenantId,
      scopeKind: node.kind,
      scopeId: node.id,
      itemType: type,
      itemId,
      itemName: item.name,
      assignedAt: now,
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await w.transactWrite([
        tx.put(edge, { ifNotExists: true, onConditionFailed: () => conflict(`${type}Id`, 'Already assigned') }),
        auditPut(ctx, { T: this.h.T, tenantId, action: `${node.kind}.${type}.assign`, entityType: node.kind, entityId: node.id, related: { [`${type}Id`]: itemId } }, this.store.now()),
      ]);
    } catch (e) {
      const existing = await this.store.get<Item>(d.edge(K, node.id, itemId));
      if (existing) return { assignment: assignmentView(existing), created: false };
      throw e;
    }
    return { assignment: assignmentView(edge), created: true };
  }

  async unassign(ctx: RequestContext, tenantId: string, scopeId: string, type: CatalogItemType, itemId: string, kind?: string): Promise<void> {
    const w = at(this.store, this.store.now());
    const node = await this.catalogNode(tenantId, scopeId, kind);
    const K = this.repo.prefix(node.kind);
    await w.transactWrite([
      tx.delete(DEF[type].edge(K, node.id, itemId), { mustExist: true, onConditionFailed: () => notFound(`${type} assignment`, itemId) }),
      auditPut(ctx, { T: this.h.T, tenantId, action: `${node.kind}.${type}.unassign`, entityType: node.kind, entityId: node.id, related: { [`${type}Id`]: itemId } }, this.store.now()),
    ]);
  }

  /**
   * 000 "enterprise with its products and services": ONE Query on the node's partition
   * `<KIND>#id` (filtered to the node, its products and its services).
   */
  async scopeCatalog(tenantId: string, scopeId: string, kind: string, p: PageQuery = {}): Promise<{ scope?: ScopeView; products: CatalogAssignmentView[]; services: CatalogAssignmentView[]; cursor: string | null }> {
    const def = this.h.kinds[kind];
    if (!def) this.repo.prefix(kind);
    if (!def.catalog) throw validation('kind', `A ${kind} holds no products or services`);
    const page = await this.store.query<Item>({
      pk: keys.nodePartition(def.prefix, scopeId).pk,
      filter: {
        expression: '#tid = :tid AND #t IN (:n, :p, :s)',
        names: { '#tid': 'tenantId', '#t': 'Type' },
        values: { ':tid': tenantId, ':n': 'ScopeNode', ':p': DEF.product.EdgeType, ':s': DEF.service.EdgeType },
      },
      limit: p.limit ?? 100,
      cursor: p.cursor,
    });
    const node = page.items.find((i) => i.Type === 'ScopeNode');
    if (!node && !p.cursor) throw notFound(kind, scopeId);
    return {
      ...(node ? { scope: scopeView(nodeRecord(node)) } : {}),
      products: page.items.filter((i) => i.Type === DEF.product.EdgeType).map(assignmentView),
      services: page.items.filter((i) => i.Type === DEF.service.EdgeType).map(assignmentView),
      cursor: page.cursor,
    };
  }

  /** The catalog kind to use when a route does not name one (the only kind with `catalog`). */
  defaultKind(): string | undefined {
    const kinds = Object.values(this.h.kinds).filter((k) => k.catalog);
    return kinds.length === 1 ? kinds[0].name : undefined;
  }

  /** Scopes holding an item: Query GSI2 `PRODUCT#pid` (platform-wide; eventually consistent). */
  async holders(type: CatalogItemType, itemId: string, p: PageQuery = {}): Promise<Page<CatalogAssignmentView>> {
    const q = DEF[type].owners(itemId);
    const filter = { expression: '#t = :t', names: { '#t': 'Type' }, values: { ':t': DEF[type].EdgeType } };
    const page = await this.store.query<Item>({ index: q.index, pk: q.pk, filter, limit: p.limit, cursor: p.cursor });
    return { items: page.items.map(assignmentView), cursor: page.cursor };
  }
}
