/**
 * Module subscriptions of a scope (001): `SCOPE#<KIND>#<sid>` / `SUBSCRIPTION#<moduleId>`, and GSI5
 * `MODULE#<moduleId>` for all subscriptions of a module. A subscription may draw on a license of
 * the same tenant (checked in the write's transaction). Its URL id is opaque: it decodes to the
 * key (scope kind, scope id, module) without a GSI.
 */
import type { RequestContext } from '../context.ts';
import { conflict, notFound, validation } from '../errors.ts';
import { keys, opaqueId } from '../store/keys.ts';
import { tx, type Item, type Page } from '../store/store.ts';
import { auditPut } from '../audit/record.ts';
import type { ScopeRef } from '../tenancy/model.ts';
import { checkId, isoInstant, publicOf, summaryOf, resolveScope, withIfMatch, type ServiceDeps } from './common.ts';
import type { PageOptions } from './licenses.ts';

export const SUBSCRIPTION_STATUSES = ['active', 'expired', 'trial'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export interface Subscription {
  id: string;
  tenantId: string;
  scope: ScopeRef;
  moduleId: string;
  status: SubscriptionStatus;
  tier: string;
  autoRenew: boolean;
  usageQuota: Record<string, number>;
  startDate: string;
  endDate?: string;
  licenseId?: string;
  createdBy: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface SubscriptionInput {
  scope: ScopeRef;
  moduleId: string;
  status?: SubscriptionStatus;
  tier?: string;
  autoRenew?: boolean;
  usageQuota?: Record<string, number>;
  startDate?: string;
  endDate?: string;
  licenseId?: string;
}

export type SubscriptionPatch = Partial<Pick<SubscriptionInput, 'status' | 'tier' | 'autoRenew' | 'usageQuota' | 'endDate' | 'licenseId'>>;

export const subscriptionId = (scope: ScopeRef, moduleId: string) => opaqueId.encode([scope.kind, scope.id, moduleId]);

export function createSubscriptionService(deps: ServiceDeps) {
  const { store, hierarchy: h } = deps;
  const T = h.T;

  function decodeId(tenantId: string, id: string) {
    const parts = opaqueId.decode(id, 3);
    if (!parts) throw notFound('subscription', id);
    const [kind, scopeId, moduleId] = parts;
    const scope = resolveScope(h, tenantId, { kind, id: scopeId });
    return { scope, moduleId, key: keys.subscription(scope.KIND, scopeId, moduleId) };
  }

  const toPublic = (it: Item) => publicOf<Subscription>(it);

  function checkQuota(q: Record<string, number> | undefined) {
    for (const [k, v] of Object.entries(q ?? {})) {
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw validation(`usageQuota.${k}`, 'Must be a number ≥ 0');
    }
  }

  const licenseCheck = (tenantId: string, licenseId: string) => {
    checkId('licenseId', licenseId);
    return tx.check(keys.license(T, tenantId, licenseId), { mustExist: true, onConditionFailed: () => notFound('license', licenseId) });
  };

  async function read(tenantId: string, id: string) {
    const d = decodeId(tenantId, id);
    const it = await store.get<Item>(d.key);
    if (!it || it.tenantId !== tenantId) throw notFound('subscription', id);
    return { ...d, item: it as Item & Subscription };
  }

  const tenantFilter = (tenantId: string) => ({ expression: '#tid = :tid', names: { '#tid': 'tenantId' }, values: { ':tid': tenantId } });

  return {
    async create(ctx: RequestContext, tenantId: string, input: SubscriptionInput): Promise<Subscription> {
      const scope = resolveScope(h, tenantId, input.scope);
      checkId('moduleId', input.moduleId);
      checkQuota(input.usageQuota);
      const now = deps.now().toISOString();
      const startDate = input.startDate ? isoInstant('startDate', input.startDate) : now;
      const endDate = input.endDate ? isoInstant('endDate', input.endDate) : undefined;
      if (endDate && endDate <= startDate) throw validation('endDate', 'Must be after startDate');
      const id = subscriptionId(input.scope, input.moduleId);
      const item = {
        ...keys.subscription(scope.KIND, input.scope.id, input.moduleId),
        ...keys.subscriptionIndex(scope.KIND, input.scope.id, input.moduleId),
        Type: 'ServiceSubscription',
        id,
        tenantId,
        scope: input.scope,
        moduleId: input.moduleId,
        status: input.status ?? 'active',
        tier: input.tier ?? 'standard',
        autoRenew: input.autoRenew ?? false,
        usageQuota: input.usageQuota ?? {},
        startDate,
        endDate,
        licenseId: input.licenseId,
        createdBy: ctx.actor.id,
      };
      const stamped = store.stampForPut(item);
      await store.transactWrite([
        scope.check,
        ...(input.licenseId ? [licenseCheck(tenantId, input.licenseId)] : []),
        tx.put(item, { ifNotExists: true, onConditionFailed: () => conflict('moduleId', `The ${input.scope.kind} ${input.scope.id} already subscribes to ${input.moduleId}`) }),
        auditPut(ctx, { T, tenantId, action: 'subscription.create', entityType: 'subscription', entityId: id, after: summaryOf(stamped) }, deps.now()),
      ]);
      return toPublic(stamped);
    },

    get: async (tenantId: string, id: string) => toPublic((await read(tenantId, id)).item),

    async update(ctx: RequestContext, tenantId: string, id: string, patch: SubscriptionPatch, ifMatch?: number): Promise<Subscription> {
      const { key, item } = await read(tenantId, id);
      checkQuota(patch.usageQuota);
      const endDate = patch.endDate !== undefined ? isoInstant('endDate', patch.endDate) : item.endDate;
      if (endDate && endDate <= item.startDate) throw validation('endDate', 'Must be after startDate');
      const set = { status: patch.status, tier: patch.tier, autoRenew: patch.autoRenew, usageQuota: patch.usageQuota, endDate, licenseId: patch.licenseId };
      const next = { ...item, ...Object.fromEntries(Object.entries(set).filter(([, v]) => v !== undefined)) };
      const version = ifMatch ?? item.version;
      return withIfMatch(ifMatch, async () => {
        await store.transactWrite([
          ...(patch.licenseId ? [licenseCheck(tenantId, patch.licenseId)] : []),
          tx.update(key, { set, expectedVersion: version, what: `subscription ${id}` }),
          auditPut(ctx, { T, tenantId, action: 'subscription.update', entityType: 'subscription', entityId: id, before: summaryOf(item), after: summaryOf(next) }, deps.now()),
        ]);
        return toPublic({ ...next, version: version + 1, updatedAt: store.now().toISOString() });
      });
    },

    async delete(ctx: RequestContext, tenantId: string, id: string, ifMatch?: number): Promise<void> {
      const { key, item } = await read(tenantId, id);
      await withIfMatch(ifMatch, () =>
        store.transactWrite([
          tx.delete(key, { expectedVersion: ifMatch ?? item.version, what: `subscription ${id}` }),
          auditPut(ctx, { T, tenantId, action: 'subscription.delete', entityType: 'subscription', entityId: id, before: summaryOf(item) }, deps.now()),
        ]),
      );
    },

    /**
     * A scope's subscriptions (one Query of its partition); `status: 'active'` also drops those past
     * their end date. Items of another tenant's scope never match the tenant filter.
     */
    async ofScope(tenantId: string, ref: ScopeRef, o: PageOptions & { status?: SubscriptionStatus } = {}): Promise<Page<Subscription>> {
      const scope = resolveScope(h, tenantId, ref);
      const q = keys.subscriptionsOfScope(scope.KIND, ref.id);
      const names: Record<string, string> = { '#tid': 'tenantId' };
      const values: Record<string, unknown> = { ':tid': tenantId };
      let expression = '#tid = :tid';
      if (o.status) {
        expression += ' AND #st = :st';
        names['#st'] = 'status';
        values[':st'] = o.status;
        if (o.status === 'active') {
          expression += ' AND (attribute_not_exists(#end) OR #end > :now)';
          names['#end'] = 'endDate';
          values[':now'] = deps.now().toISOString();
        }
      }
      const page = await store.query<Item>({ pk: q.pk, sk: { beginsWith: q.skPrefix }, limit: o.limit, cursor: o.cursor, filter: { expression, names, values } });
      return { items: page.items.map(toPublic), cursor: page.cursor };
    },

    /** All subscriptions of a module (GSI5); `tenantId` keeps a tenant to its own. */
    async ofModule(moduleId: string, o: PageOptions & { tenantId?: string } = {}): Promise<Page<Subscription>> {
      checkId('moduleId', moduleId);
      const q = keys.subscriptionsOfModule(moduleId);
      const page = await store.query<Item>({ index: q.index, pk: q.pk, limit: o.limit, cursor: o.cursor, ...(o.tenantId ? { filter: tenantFilter(o.tenantId) } : {}) });
      return { items: page.items.map(toPublic), cursor: page.cursor };
    },
  };
}

export type SubscriptionService = ReturnType<typeof createSubscriptionService>;
