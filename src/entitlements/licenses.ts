/**
 * Products (platform catalog) and licenses (000): a tenant's license for a product or an
 * enterprise, with seats that can never be over-assigned — the seat item and the license's
 * `seatsUsed` counter are written in one transaction whose condition is `seatsUsed < seats`, the
 * license active and not past its end.
 */
import { ulid } from 'ulid';
import type { RequestContext } from '../context.ts';
import { conflict, GatehouseError, notFound, validation } from '../errors.ts';
import { allShards, keys, SHARDS } from '../store/keys.ts';
import { tx, type Item, type Page, type TxAction } from '../store/store.ts';
import { auditPut, PLATFORM_AUDIT } from '../audit/record.ts';
import { shardedPage } from '../audit/sharded.ts';
import { checkId, isoInstant, publicOf, tenantOwned, withIfMatch, type ServiceDeps } from './common.ts';

export type LicenseStatus = 'active' | 'expired';

export interface Product {
  id: string;
  name: string;
  description?: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface License {
  id: string;
  tenantId: string;
  /** Exactly one of productId / enterpriseId. */
  productId?: string;
  enterpriseId?: string;
  name?: string;
  seats: number;
  seatsUsed: number;
  startDate: string;
  /** The instant the license ends (ISO). */
  endDate: string;
  status: LicenseStatus;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface Seat {
  licenseId: string;
  tenantId: string;
  userId: string;
  assignedAt: string;
  assignedBy: string;
}

export interface LicenseInput {
  productId?: string;
  enterpriseId?: string;
  name?: string;
  seats: number;
  startDate: string;
  endDate: string;
}

export interface LicensePatch {
  name?: string;
  seats?: number;
  startDate?: string;
  endDate?: string;
}

export interface PageOptions {
  limit?: number;
  cursor?: string | null;
}

/** Thrown by the seat counter's condition; classified by re-reading the license. */
class CounterConditionFailed extends GatehouseError {}

export function createProductService({ store }: Pick<ServiceDeps, 'store'>) {
  return {
    async create(ctx: RequestContext, input: { id?: string; name: string; description?: string }): Promise<Product> {
      const id = input.id ?? ulid();
      checkId('id', id);
      const item = { ...keys.product(id), ...keys.productIndex(id), Type: 'Product', id, name: input.name, description: input.description };
      const stamped = store.stampForPut(item);
      await store.transactWrite([
        tx.put(item, { ifNotExists: true, onConditionFailed: () => conflict('id', `Product ${id} already exists`) }),
        auditPut(ctx, { ...PLATFORM_AUDIT, action: 'product.create', entityType: 'product', entityId: id, after: publicOf(stamped) }, store.now()),
      ]);
      return publicOf<Product>(stamped);
    },
    async get(id: string): Promise<Product> {
      const it = await store.get<Item>(keys.product(id));
      if (!it) throw notFound('product', id);
      return publicOf<Product>(it);
    },
    async list(o: PageOptions = {}): Promise<Page<Product>> {
      const q = keys.productsAll();
      const page = await store.query<Item>({ index: q.index, pk: q.pk, limit: o.limit, cursor: o.cursor });
      return { items: page.items.map((i) => publicOf<Product>(i)), cursor: page.cursor };
    },
  };
}

export type ProductService = ReturnType<typeof createProductService>;

export function createLicenseService(deps: ServiceDeps) {
  const { store, hierarchy: h } = deps;
  const T = h.T;
  const enterpriseKind = h.kinds.enterprise;

  const ownerOf = (l: { productId?: string; enterpriseId?: string }) =>
    l.enterpriseId ? { OWNER: enterpriseKind?.prefix ?? 'ENTERPRISE', id: l.enterpriseId } : { OWNER: 'PRODUCT', id: l.productId! };

  const indexOf = (l: { id: string; productId?: string; enterpriseId?: string; status: LicenseStatus; endDate: string }) => {
    const o = ownerOf(l);
    return keys.licenseIndex(o.OWNER, o.id, l.id, l.status, l.endDate);
  };
  /** Status and end date move only the GSI3 keys; the owner (GSI2) never changes. */
  const statusIndexOf = (l: Parameters<typeof indexOf>[0]) => {
    const { GSI3PK, GSI3SK } = indexOf(l);
    return { GSI3PK, GSI3SK };
  };

  async function read(tenantId: string, id: string): Promise<License & Item> {
    const it = await store.get<License & Item>(keys.license(T, tenantId, id));
    if (!it) throw notFound('license', id);
    return it;
  }

  const audit = (ctx: RequestContext, tenantId: string, action: string, entityId: string, before?: Item, after?: Item, entityType = 'license'): TxAction =>
    auditPut(ctx, { T, tenantId, action, entityType, entityId, before: before && publicOf(before), after: after && publicOf(after) }, deps.now());

  /** Why the seat counter's condition failed, from the license as it is now. */
  async function classify(tenantId: string, licenseId: string): Promise<GatehouseError> {
    const l = await store.get<License>(keys.license(T, tenantId, licenseId));
    if (!l) return notFound('license', licenseId);
    const now = deps.now().toISOString();
    if (l.status !== 'active' || l.endDate <= now) {
      return new GatehouseError('UNPROCESSABLE', `License ${licenseId} is expired (ended ${l.endDate}); renew it before assigning seats`, {
        errors: [{ field: 'license', message: 'The license is expired' }],
      });
    }
    return conflict('seats', `All ${l.seats} seats of license ${licenseId} are assigned`, { seats: l.seats, seatsUsed: l.seatsUsed });
  }

  return {
    async create(ctx: RequestContext, tenantId: string, input: LicenseInput): Promise<License> {
      if (!!input.productId === !!input.enterpriseId) throw validation('productId', 'Give exactly one of productId or enterpriseId');
      if (input.productId) checkId('productId', input.productId);
      if (input.enterpriseId) {
        checkId('enterpriseId', input.enterpriseId);
        if (!enterpriseKind) throw validation('enterpriseId', `The "${h.name}" hierarchy has no enterprise kind; license a product instead`);
      }
      if (!Number.isInteger(input.seats) || input.seats < 1) throw validation('seats', 'Must be a whole number ≥ 1');
      const startDate = isoInstant('startDate', input.startDate);
      const endDate = isoInstant('endDate', input.endDate);
      if (endDate <= startDate) throw validation('endDate', 'Must be after startDate');
      const id = ulid();
      const status: LicenseStatus = endDate > deps.now().toISOString() ? 'active' : 'expired';
      const base = { id, tenantId, productId: input.productId, enterpriseId: input.enterpriseId, name: input.name, seats: input.seats, seatsUsed: 0, startDate, endDate, status };
      const item = { ...keys.license(T, tenantId, id), ...indexOf(base), Type: 'License', ...base };
      const stamped = store.stampForPut(item);
      const ownerCheck = input.enterpriseId
        ? tenantOwned(keys.scopeNode(enterpriseKind!.prefix, input.enterpriseId), tenantId, () => notFound('enterprise', input.enterpriseId))
        : tx.check(keys.product(input.productId!), { mustExist: true, onConditionFailed: () => notFound('product', input.productId) });
      await store.transactWrite([
        tx.check(keys.tenant(T, tenantId), { mustExist: true, onConditionFailed: () => notFound(h.tenantKind, tenantId) }),
        ownerCheck,
        tx.put(item, { ifNotExists: true }),
        audit(ctx, tenantId, 'license.create', id, undefined, stamped),
      ]);
      return publicOf<License>(stamped);
    },

    get: async (tenantId: string, id: string): Promise<License> => publicOf<License>(await read(tenantId, id)),

    /** A tenant's licenses: one Query of the tenant's partition (000 "licenses by account"). */
    async ofTenant(tenantId: string, o: PageOptions = {}): Promise<Page<License>> {
      const q = keys.licensesOfTenant(T, tenantId);
      const page = await store.query<Item>({ pk: q.pk, sk: { beginsWith: q.skPrefix }, limit: o.limit, cursor: o.cursor });
      return { items: page.items.map((i) => publicOf<License>(i)), cursor: page.cursor };
    },

    /** Licenses of a product or enterprise (GSI2); `tenantId` keeps a tenant to its own. */
    async ofOwner(owner: { productId?: string; enterpriseId?: string }, o: PageOptions & { tenantId?: string } = {}): Promise<Page<License>> {
      const { OWNER, id } = ownerOf(owner);
      const q = keys.licensesOfOwner(OWNER, id);
      const page = await store.query<Item>({
        index: q.index,
        pk: q.pk,
        sk: { beginsWith: q.skPrefix },
        limit: o.limit,
        cursor: o.cursor,
        ...(o.tenantId ? { filter: { expression: '#t = :t', names: { '#t': 'tenantId' }, values: { ':t': o.tenantId } } } : {}),
      });
      return { items: page.items.map((i) => publicOf<License>(i)), cursor: page.cursor };
    },

    /** Licenses with `status` ending before `before`, soonest first: every GSI3 shard in one wave. */
    async endingBefore(before: string, o: PageOptions & { status?: LicenseStatus } = {}): Promise<Page<License>> {
      const page = await shardedPage<Item>(store, {
        index: 'GSI3',
        pks: allShards(SHARDS.licenseStatus).map((s) => keys.licensesByStatusShard(o.status ?? 'active', s).pk),
        range: keys.licenseEndRange(isoInstant('before', before)),
        ascending: true,
        limit: o.limit ?? 25,
        cursor: o.cursor,
      });
      return { items: page.items.map((i) => publicOf<License>(i)), cursor: page.cursor };
    },

    async update(ctx: RequestContext, tenantId: string, id: string, patch: LicensePatch, ifMatch?: number): Promise<License> {
      const cur = await read(tenantId, id);
      const startDate = patch.startDate !== undefined ? isoInstant('startDate', patch.startDate) : cur.startDate;
      const endDate = patch.endDate !== undefined ? isoInstant('endDate', patch.endDate) : cur.endDate;
      if (endDate <= startDate) throw validation('endDate', 'Must be after startDate');
      const seats = patch.seats ?? cur.seats;
      if (!Number.isInteger(seats) || seats < 1) throw validation('seats', 'Must be a whole number ≥ 1');
      if (seats < cur.seatsUsed) throw conflict('seats', `${cur.seatsUsed} seats are assigned; release seats before lowering the count`, { seatsUsed: cur.seatsUsed });
      // A new end date renews (or ends) the license.
      const status: LicenseStatus = endDate > deps.now().toISOString() ? 'active' : 'expired';
      const next = { ...cur, name: patch.name ?? cur.name, seats, startDate, endDate, status };
      const version = ifMatch ?? cur.version;
      return withIfMatch(ifMatch, async () => {
        await store.transactWrite([
          tx.update(keys.license(T, tenantId, id), {
            set: { name: next.name, seats, startDate, endDate, status, ...statusIndexOf(next) },
            expectedVersion: version,
            // The counter may have moved since the read: never below the assigned seats.
            condition: { expression: '#su <= :seats', names: { '#su': 'seatsUsed' }, values: { ':seats': seats } },
            what: `license ${id}`,
          }),
          audit(ctx, tenantId, 'license.update', id, cur, next),
        ]);
        return publicOf<License>({ ...next, version: version + 1, updatedAt: store.now().toISOString() });
      });
    },

    async delete(ctx: RequestContext, tenantId: string, id: string, ifMatch?: number): Promise<void> {
      const cur = await read(tenantId, id);
      if (cur.seatsUsed > 0) throw conflict('seats', `${cur.seatsUsed} seats are assigned; release them before deleting the license`, { seatsUsed: cur.seatsUsed });
      await withIfMatch(ifMatch, () =>
        store.transactWrite([
          tx.delete(keys.license(T, tenantId, id), {
            expectedVersion: ifMatch ?? cur.version,
            condition: { expression: '#su = :z', names: { '#su': 'seatsUsed' }, values: { ':z': 0 } },
            what: `license ${id}`,
          }),
          audit(ctx, tenantId, 'license.delete', id, cur),
        ]),
      );
    },

    /** Marks an active license past its end as expired (the expiry job). No-op if already flipped. */
    async expire(ctx: RequestContext, tenantId: string, id: string): Promise<boolean> {
      const cur = await read(tenantId, id);
      if (cur.status === 'expired') return false;
      const next = { ...cur, status: 'expired' as const };
      try {
        await store.transactWrite([
          tx.update(keys.license(T, tenantId, id), {
            set: { status: 'expired', ...statusIndexOf(next) },
            condition: { expression: '#s = :a AND #e <= :now', names: { '#s': 'status', '#e': 'endDate' }, values: { ':a': 'active', ':now': deps.now().toISOString() } },
            onConditionFailed: () => new CounterConditionFailed('CONFLICT', 'not expirable'),
          }),
          audit(ctx, tenantId, 'license.expire', id, { status: cur.status }, { status: 'expired' }),
        ]);
        return true;
      } catch (e) {
        if (e instanceof CounterConditionFailed) return false;
        throw e;
      }
    },

    /**
     * Gives a user a seat. One transaction: the user belongs to the tenant, the seat item is new,
     * and the license counter moves only while `seatsUsed < seats` on an active, unexpired license.
     */
    async assignSeat(ctx: RequestContext, tenantId: string, licenseId: string, userId: string): Promise<Seat> {
      checkId('userId', userId);
      const now = deps.now().toISOString();
      const seat = { licenseId, tenantId, userId, assignedAt: now, assignedBy: ctx.actor.id };
      const actions = [
        tenantOwned(keys.user(userId), tenantId, () => notFound('user', userId)),
        tx.put({ ...keys.licenseSeat(licenseId, userId), Type: 'LicenseSeat', ...seat }, {
          ifNotExists: true,
          onConditionFailed: () => conflict('userId', `User ${userId} already holds a seat of license ${licenseId}`),
        }),
        tx.update(keys.license(T, tenantId, licenseId), {
          add: { seatsUsed: 1 },
          condition: {
            expression: '#su < #seats AND #s = :active AND #end > :now',
            names: { '#su': 'seatsUsed', '#seats': 'seats', '#s': 'status', '#end': 'endDate' },
            values: { ':active': 'active', ':now': now },
          },
          onConditionFailed: () => new CounterConditionFailed('CONFLICT', 'seat counter'),
        }),
        auditPut(ctx, { T, tenantId, action: 'license.seat.assign', entityType: 'license', entityId: licenseId, after: { userId } }, deps.now()),
      ];
      try {
        // Many concurrent assignments on one license conflict at the counter; conflicts are
        // transient (the store retries them) and, if they persist, retried here a few more times.
        for (let attempt = 0; ; attempt++) {
          try {
            await store.transactWrite(actions);
            break;
          } catch (e) {
            if (!(e instanceof GatehouseError && e.code === 'RETRYABLE') || attempt >= 4) throw e;
            await new Promise((r) => setTimeout(r, 20 + Math.random() * 80 * (attempt + 1)));
          }
        }
      } catch (e) {
        if (e instanceof CounterConditionFailed) throw await classify(tenantId, licenseId);
        throw e;
      }
      return seat;
    },

    async releaseSeat(ctx: RequestContext, tenantId: string, licenseId: string, userId: string): Promise<void> {
      checkId('userId', userId);
      await store.transactWrite([
        tx.delete(keys.licenseSeat(licenseId, userId), {
          mustExist: true,
          condition: { expression: '#t = :t', names: { '#t': 'tenantId' }, values: { ':t': tenantId } },
          onConditionFailed: () => notFound('seat', `${licenseId}/${userId}`),
        }),
        tx.update(keys.license(T, tenantId, licenseId), {
          add: { seatsUsed: -1 },
          condition: { expression: '#su > :z', names: { '#su': 'seatsUsed' }, values: { ':z': 0 } },
          onConditionFailed: () => notFound('license', licenseId),
        }),
        auditPut(ctx, { T, tenantId, action: 'license.seat.release', entityType: 'license', entityId: licenseId, before: { userId } }, deps.now()),
      ]);
    },

    /** The seats of a license: its partition, read with the license in one wave. */
    async seats(tenantId: string, licenseId: string, o: PageOptions = {}): Promise<Page<Seat>> {
      const q = keys.seatsOfLicense(licenseId);
      const [license, page] = await Promise.all([
        store.get(keys.license(T, tenantId, licenseId)),
        store.query<Item>({ pk: q.pk, sk: { beginsWith: q.skPrefix }, limit: o.limit, cursor: o.cursor }),
      ]);
      if (!license) throw notFound('license', licenseId);
      return { items: page.items.map((i) => publicOf<Seat>(i)), cursor: page.cursor };
    },
  };
}

export type LicenseService = ReturnType<typeof createLicenseService>;
