/**
 * Child resources stored under their owner's partition (000): a tenant's addresses and technical
 * users, a workstream's tools. Which owner kinds may hold which resource is hierarchy data
 * (`resources` in the config). Reads are one GetItem / one Query on the owner's partition.
 */
import { ulid } from 'ulid';
import { at } from './clock.ts';
import type { ZodType } from 'zod';
import { auditPut } from '../audit/record.ts';
import type { RequestContext } from '../context.ts';
import { notFound, validation, versionConflict } from '../errors.ts';
import { keys, type Key } from '../store/keys.ts';
import { tx, type Item, type Page } from '../store/store.ts';
import { resourcesOf } from './hierarchy.ts';
import type { Hierarchy, ResourceType, ScopeRef } from './model.ts';
import { nodeRecord, TenancyRepository, type PageQuery } from './repository.ts';
import {
  CreateAddressInput,
  CreateTechUserInput,
  CreateToolInput,
  UpdateAddressInput,
  UpdateTechUserInput,
  UpdateToolInput,
} from './schema.ts';
import { parse } from './validate.ts';

interface ResourceDef {
  Type: string;
  key: (OWNER: string, ownerId: string, id: string) => Key;
  list: (OWNER: string, ownerId: string) => { pk: string; skPrefix: string };
  create: ZodType<Record<string, unknown>>;
  update: ZodType<Record<string, unknown>>;
}

export const RESOURCES: Record<ResourceType, ResourceDef> = {
  address: { Type: 'Address', key: keys.address, list: keys.addressesOf, create: CreateAddressInput as never, update: UpdateAddressInput as never },
  tech_user: { Type: 'TechUser', key: keys.techUser, list: keys.techUsersOf, create: CreateTechUserInput as never, update: UpdateTechUserInput as never },
  tool: { Type: 'Tool', key: keys.tool, list: keys.toolsOf, create: CreateToolInput as never, update: UpdateToolInput as never },
};

export type ResourceView = Record<string, unknown> & { id: string; tenantId: string; owner: ScopeRef; version: number; createdAt: string; updatedAt: string };

const HIDDEN = new Set(['PK', 'SK', 'Type', 'GSI1PK', 'GSI1SK', 'GSI2PK', 'GSI2SK', 'GSI3PK', 'GSI3SK', 'GSI4PK', 'GSI4SK', 'GSI5PK', 'GSI5SK']);
export const resourceView = (it: Item): ResourceView => Object.fromEntries(Object.entries(it).filter(([k]) => !HIDDEN.has(k))) as ResourceView;

export class ResourceService {
  constructor(
    private readonly repo: TenancyRepository,
    private readonly h: Hierarchy,
  ) {}

  private get store() {
    return this.repo.store;
  }

  private allowed(owner: ScopeRef, type: ResourceType) {
    const p = this.repo.prefix(owner.kind, 'owner.kind');
    if (!resourcesOf(this.h, owner.kind).includes(type)) {
      throw validation('owner', `A ${owner.kind} has no ${type.replace('_', ' ')}s (allowed: ${resourcesOf(this.h, owner.kind).join(', ') || 'none'})`);
    }
    return p;
  }

  /** The owner (the tenant or a node) must exist in the tenant: one GetItem. */
  private async checkOwner(tenantId: string, owner: ScopeRef) {
    if (owner.kind === this.h.tenantKind) {
      if (owner.id !== tenantId || !(await this.repo.getTenant(tenantId))) throw notFound(this.h.tenantKind, owner.id);
      return;
    }
    const n = await this.repo.getNode(owner.kind, owner.id);
    if (!n || nodeRecord(n).tenantId !== tenantId) throw notFound(owner.kind, owner.id);
  }

  private audit(ctx: RequestContext, tenantId: string, type: ResourceType, action: string, id: string, before?: object, after?: object) {
    return auditPut(ctx, { T: this.h.T, tenantId, action: `${type}.${action}`, entityType: type, entityId: id, before: before as never, after: after as never }, this.store.now());
  }

  /** Creates a resource under its owner: the item and its audit record in one transaction. */
  async create(ctx: RequestContext, tenantId: string, owner: ScopeRef, type: ResourceType, input: unknown): Promise<ResourceView> {
    const w = at(this.store, this.store.now());
    const OWNER = this.allowed(owner, type);
    const def = RESOURCES[type];
    const body = parse(def.create, input);
    await this.checkOwner(tenantId, owner);
    const id = ulid();
    const now = w.now().toISOString();
    const item = { ...def.key(OWNER, owner.id, id), Type: def.Type, id, tenantId, owner: { kind: owner.kind, id: owner.id }, ...body, version: 1, createdAt: now, updatedAt: now };
    await w.transactWrite([tx.put(item, { ifNotExists: true }), this.audit(ctx, tenantId, type, 'create', id, undefined, resourceView(item))]);
    return resourceView(w.stampForPut(item));
  }

  /** GetItem `<OWNER>#oid` / `<TYPE>#id`. */
  async get(tenantId: string, owner: ScopeRef, type: ResourceType, id: string): Promise<ResourceView> {
    const OWNER = this.allowed(owner, type);
    const it = await this.store.get<Item>(RESOURCES[type].key(OWNER, owner.id, id));
    if (!it || it.tenantId !== tenantId) throw notFound(type, id);
    return resourceView(it);
  }

  /** Query `<OWNER>#oid` begins_with `<TYPE>#`. */
  async list(tenantId: string, owner: ScopeRef, type: ResourceType, p: PageQuery = {}): Promise<Page<ResourceView>> {
    const OWNER = this.allowed(owner, type);
    const q = RESOURCES[type].list(OWNER, owner.id);
    const page = await this.store.query<Item>({
      pk: q.pk,
      sk: { beginsWith: q.skPrefix },
      filter: { expression: '#tid = :tid', names: { '#tid': 'tenantId' }, values: { ':tid': tenantId } },
      limit: p.limit,
      cursor: p.cursor,
    });
    return { items: page.items.map(resourceView), cursor: page.cursor };
  }

  /** Patches fields (validated) at `expectedVersion`. */
  async update(ctx: RequestContext, tenantId: string, owner: ScopeRef, type: ResourceType, id: string, input: unknown, expectedVersion?: number): Promise<ResourceView> {
    const w = at(this.store, this.store.now());
    const OWNER = this.allowed(owner, type);
    const def = RESOURCES[type];
    const patch = parse(def.update, input);
    const cur = await this.store.get<Item>(def.key(OWNER, owner.id, id));
    if (!cur || cur.tenantId !== tenantId) throw notFound(type, id);
    if (expectedVersion !== undefined && cur.version !== expectedVersion) throw versionConflict(`${type} ${id}`, expectedVersion);
    const next = { ...cur, ...patch };
    await w.transactWrite([
      tx.put(next, { expectedVersion: Number(cur.version), what: `${type} ${id}` }),
      this.audit(ctx, tenantId, type, 'update', id, resourceView(cur), resourceView(next)),
    ]);
    return resourceView(w.stampForPut(next, { expectedVersion: Number(cur.version) }));
  }

  async delete(ctx: RequestContext, tenantId: string, owner: ScopeRef, type: ResourceType, id: string, expectedVersion?: number): Promise<void> {
    const w = at(this.store, this.store.now());
    const OWNER = this.allowed(owner, type);
    const key = RESOURCES[type].key(OWNER, owner.id, id);
    const cur = await this.store.get<Item>(key);
    if (!cur || cur.tenantId !== tenantId) throw notFound(type, id);
    if (expectedVersion !== undefined && cur.version !== expectedVersion) throw versionConflict(`${type} ${id}`, expectedVersion);
    await w.transactWrite([
      tx.delete(key, { expectedVersion: Number(cur.version), what: `${type} ${id}` }),
      this.audit(ctx, tenantId, type, 'delete', id, resourceView(cur)),
    ]);
  }
}
