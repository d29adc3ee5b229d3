/** The permission catalog: `SYSTEM / PERMISSION#<key>` (pages are keys `page:<name>`). */
import type { RequestContext } from '../context.ts';
import { auditPut, PLATFORM_AUDIT } from '../audit/record.ts';
import { GatehouseError, notFound, validation } from '../errors.ts';
import { keys } from '../store/keys.ts';
import { tx, type Page } from '../store/store.ts';
import { publicOf, type AccessDeps } from './common.ts';
import { isPermissionKey, isPermissionPattern, parsePermissionKey, type PermissionRecord } from './model.ts';
import { stamps } from './stamps.ts';

export interface PermissionInput {
  key: string;
  description?: string;
  isDangerous?: boolean;
}

export type PermissionsService = ReturnType<typeof createPermissions>;

export function createPermissions({ store }: AccessDeps) {
  function checkKey(field: string, key: unknown): string {
    if (typeof key !== 'string' || !isPermissionKey(key)) {
      throw validation(field, 'Use module:action[:resource] (letters, digits, _ . -); pages are page:<name>; wildcards belong in roles');
    }
    return key;
  }

  const toItem = (input: PermissionInput) => {
    const key = checkKey('key', input.key);
    if (input.description !== undefined && (typeof input.description !== 'string' || input.description.length > 1000)) throw validation('description', 'At most 1000 characters');
    return {
      ...keys.permission(key),
      Type: 'Permission',
      key,
      ...parsePermissionKey(key),
      description: input.description,
      isDangerous: input.isDangerous ?? false,
    };
  };

  async function create(ctx: RequestContext, input: PermissionInput): Promise<PermissionRecord> {
    const item = toItem(input);
    const stamped = store.stampForPut(item);
    await store.transactWrite([
      tx.put(item, { ifNotExists: true, onConditionFailed: () => new GatehouseError('CONFLICT', `Permission ${item.key} already exists`, { errors: [{ field: 'key', message: 'Already exists' }] }) }),
      ...stamps.bumpGlobal(),
      auditPut(ctx, { ...PLATFORM_AUDIT, action: 'permission.create', entityType: 'Permission', entityId: item.key, after: item }, store.now()),
    ]);
    return publicOf<PermissionRecord>(stamped);
  }

  return {
    /** Adds a permission (platform admin). Bumps the global stamp: catalog changes are platform-wide. */
    create,

    /** Creates the missing ones of many (bootstrap, demo); existing keys are left as they are. */
    async ensure(ctx: RequestContext, inputs: PermissionInput[]): Promise<number> {
      const existing = new Set((await store.batchGet<PermissionRecord>(inputs.map((p) => keys.permission(p.key)))).map((p) => p.key));
      const missing = inputs.filter((p) => !existing.has(p.key));
      for (let i = 0; i < missing.length; i += 80) {
        const chunk = missing.slice(i, i + 80).map(toItem);
        try {
          await store.transactWrite([
            ...chunk.map((item) => tx.put(item, { ifNotExists: true })),
            ...stamps.bumpGlobal(),
            auditPut(ctx, { ...PLATFORM_AUDIT, action: 'permission.create', entityType: 'Permission', entityId: chunk.map((c) => c.key).join(','), related: { count: chunk.length } }, store.now()),
          ]);
        } catch (e) {
          // Lost a race with a concurrent ensure: one by one, skipping what exists by now.
          if (!(e instanceof GatehouseError && e.code === 'CONFLICT')) throw e;
          for (const item of chunk) await create(ctx, item).catch((err) => { if (!(err instanceof GatehouseError && err.code === 'CONFLICT')) throw err; });
        }
      }
      return missing.length;
    },

    async get(key: string): Promise<PermissionRecord> {
      const item = await store.get<PermissionRecord>(keys.permission(key));
      if (!item) throw notFound('permission', key);
      return publicOf<PermissionRecord>(item);
    },

    /** 004 "permission definitions": one Query on `SYSTEM`, optionally by key prefix (`page:`). */
    async list(opts: { prefix?: string; limit?: number; cursor?: string } = {}): Promise<Page<PermissionRecord>> {
      const q = keys.permissions();
      const page = await store.query<PermissionRecord>({ pk: q.pk, sk: { beginsWith: q.skPrefix + (opts.prefix ?? '') }, limit: opts.limit, cursor: opts.cursor });
      return { items: page.items.map((i) => publicOf<PermissionRecord>(i)), cursor: page.cursor };
    },

    /**
     * Validates rule keys against the catalog (one BatchGet): exact keys must exist; patterns
     * (`*`, `module:*`) need only be well formed. Reports the first bad one as `<field>[i].key`.
     */
    async assertKnown(rules: { key: string }[], field = 'permissions'): Promise<void> {
      rules.forEach((r, i) => {
        if (typeof r?.key !== 'string' || !(isPermissionKey(r.key) || isPermissionPattern(r.key))) {
          throw validation(`${field}[${i}].key`, 'Use module:action[:resource], page:<name>, module:* or *');
        }
      });
      const exact = rules.map((r, i) => ({ key: r.key, i })).filter((r) => isPermissionKey(r.key));
      if (!exact.length) return;
      const found = new Set((await store.batchGet<PermissionRecord>(exact.map((r) => keys.permission(r.key)))).map((p) => p.key));
      const unknown = exact.find((r) => !found.has(r.key));
      if (unknown) throw validation(`${field}[${unknown.i}].key`, `Unknown permission ${unknown.key}; add it to the catalog first`);
    },
  };
}
