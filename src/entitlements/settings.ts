/**
 * Settings per scope (001): `SCOPE#<KIND>#<sid>` / `SETTING#<key>`, user-level ones under
 * `SCOPE#USER#<uid>`. The effective settings of a scope are resolved along its path (tenant →
 * … → the scope → the user): the nearest value wins unless an ancestor locked the key
 * (`isOverridable: false`), in which case the topmost lock wins. Two waves at most: the scope
 * node (its `path`) with the scope's and the user's own settings, then every ancestor's settings.
 * A write below a locked ancestor is refused in the write's own transaction (condition checks on
 * the ancestors' setting items), so a concurrent lock cannot slip between check and write.
 */
import type { RequestContext } from '../context.ts';
import { conflict, GatehouseError, notFound, validation } from '../errors.ts';
import { keys } from '../store/keys.ts';
import { tx, type Item, type Page } from '../store/store.ts';
import { auditPut } from '../audit/record.ts';
import type { ScopeNodeRecord, ScopeRef } from '../tenancy/model.ts';
import { prefixOfKind, publicOf, summaryOf, resolveScope, withIfMatch, type ResolvedScope, type ServiceDeps } from './common.ts';
import type { PageOptions } from './licenses.ts';

export const VALUE_TYPES = ['string', 'number', 'boolean', 'json'] as const;
export type ValueType = (typeof VALUE_TYPES)[number];

export const SETTING_KEY = /^[A-Za-z0-9_.:-]{1,128}$/;

export interface Setting {
  tenantId: string;
  scope: ScopeRef;
  key: string;
  value: unknown;
  valueType: ValueType;
  isOverridable: boolean;
  description?: string;
  updatedBy: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface SettingInput {
  value: unknown;
  valueType: ValueType;
  isOverridable?: boolean;
  description?: string;
}

export interface EffectiveSetting {
  key: string;
  value: unknown;
  valueType: ValueType;
  /** The scope whose value applies. */
  source: ScopeRef;
  /** Set when an ancestor's lock decided the value. */
  lockedBy?: ScopeRef;
}

export interface ExplainStep {
  scope: ScopeRef;
  value: unknown;
  valueType: ValueType;
  isOverridable: boolean;
  outcome: 'applied' | 'overridden' | 'ignored: locked above';
}

export interface EffectiveSettings {
  scope: ScopeRef;
  userId?: string;
  /** The chain read, root first (tenant … scope, then the user). */
  chain: ScopeRef[];
  settings: Record<string, EffectiveSetting>;
  /** Per key, every value found along the chain, root first, and what became of it. */
  explain?: Record<string, ExplainStep[]>;
}

/** Checks a value against its declared type; the error names `value`. */
export function checkValue(value: unknown, valueType: ValueType) {
  const ok =
    valueType === 'string' ? typeof value === 'string'
    : valueType === 'number' ? typeof value === 'number' && Number.isFinite(value)
    : valueType === 'boolean' ? typeof value === 'boolean'
    : value !== undefined;
  if (!ok) throw validation('value', `Must be a ${valueType === 'json' ? 'JSON value' : valueType} (valueType is ${valueType})`);
}

const checkKey = (key: string) => {
  if (!SETTING_KEY.test(key)) throw validation('key', 'Use 1-128 letters, digits, or _ . : -');
};

/** Resolution along a chain (root first), shared by `effective` and its tests. */
export function resolveChain(chain: { scope: ScopeRef; settings: Setting[] }[], withExplain: boolean) {
  const settings: Record<string, EffectiveSetting> = {};
  const explain: Record<string, ExplainStep[]> = {};
  const lockedAt: Record<string, ScopeRef> = {};
  for (const level of chain) {
    for (const s of level.settings) {
      const step: ExplainStep = { scope: level.scope, value: s.value, valueType: s.valueType, isOverridable: s.isOverridable, outcome: 'applied' };
      const steps = (explain[s.key] ??= []);
      if (lockedAt[s.key]) {
        step.outcome = 'ignored: locked above';
      } else {
        const prev = steps.find((x) => x.outcome === 'applied');
        if (prev) prev.outcome = 'overridden';
        settings[s.key] = { key: s.key, value: s.value, valueType: s.valueType, source: level.scope };
        if (!s.isOverridable) lockedAt[s.key] = level.scope;
      }
      steps.push(step);
    }
  }
  for (const [key, by] of Object.entries(lockedAt)) {
    // Only a lock that actually overruled something below is reported as deciding the value.
    if (explain[key].some((x) => x.outcome === 'ignored: locked above')) settings[key].lockedBy = by;
  }
  return { settings, ...(withExplain ? { explain } : {}) };
}

export function createSettingService(deps: ServiceDeps) {
  const { store, hierarchy: h } = deps;
  const T = h.T;

  const toPublic = (it: Item) => publicOf<Setting>(it);
  const tenantFilter = (tenantId: string) => ({ expression: '#tid = :tid', names: { '#tid': 'tenantId' }, values: { ':tid': tenantId } });

  /** The ancestors of a scope, root first (a scope node's stored path; the tenant for a user). */
  async function ancestorsOf(tenantId: string, scope: ResolvedScope): Promise<ScopeRef[]> {
    if (scope.isTenant) return [];
    if (scope.isUser) {
      const u = await store.get<Item>(scope.ownerKey);
      if (!u || u.tenantId !== tenantId) throw notFound('user', scope.ref.id);
      return [{ kind: h.tenantKind, id: tenantId }];
    }
    const node = await store.get<ScopeNodeRecord>(scope.ownerKey);
    if (!node || node.tenantId !== tenantId) throw notFound(scope.ref.kind, scope.ref.id);
    return node.path;
  }

  const readScopeSettings = async (KIND: string, id: string, tenantId: string) => {
    const q = keys.settingsOfScope(KIND, id);
    return (await store.queryAll<Item>({ pk: q.pk, sk: { beginsWith: q.skPrefix }, filter: tenantFilter(tenantId) })).map(toPublic);
  };

  /** Why the ancestor checks failed: a lock (409 key) or a different value type (400 valueType). */
  async function classify(ancestors: ScopeRef[], key: string, valueType: ValueType): Promise<GatehouseError> {
    const found = await store.batchGet<Setting>(ancestors.map((a) => keys.setting(prefixOfKind(h, a.kind), a.id, key)));
    const locked = found.find((s) => !s.isOverridable);
    if (locked) {
      return conflict('key', `${key} is locked at ${locked.scope.kind} ${locked.scope.id} (isOverridable: false); it cannot be set below it`, { lockedBy: locked.scope });
    }
    const other = found.find((s) => s.valueType !== valueType);
    if (other) return validation('valueType', `${key} is a ${other.valueType} at ${other.scope.kind} ${other.scope.id}; use the same valueType`);
    return new GatehouseError('RETRYABLE', 'An ancestor setting changed during the write; retry');
  }

  class AncestorCheckFailed extends GatehouseError {}

  async function getOne(tenantId: string, ref: ScopeRef, key: string): Promise<Setting> {
    checkKey(key);
    const scope = resolveScope(h, tenantId, ref, { allowUser: true });
    const it = await store.get<Item>(keys.setting(scope.KIND, ref.id, key));
    if (!it || it.tenantId !== tenantId) throw notFound('setting', key);
    return toPublic(it);
  }

  return {
    /** Creates or replaces a setting (If-Match optional), refusing a key locked above. */
    async put(ctx: RequestContext, tenantId: string, ref: ScopeRef, key: string, input: SettingInput, ifMatch?: number): Promise<Setting> {
      checkKey(key);
      const scope = resolveScope(h, tenantId, ref, { allowUser: true });
      checkValue(input.value, input.valueType);
      const sKey = keys.setting(scope.KIND, ref.id, key);
      const [ancestors, existing] = await Promise.all([ancestorsOf(tenantId, scope), store.get<Item>(sKey)]);
      if (existing && existing.tenantId !== tenantId) throw notFound(ref.kind, ref.id);
      const item = {
        ...sKey,
        Type: 'Setting',
        tenantId,
        scope: ref,
        key,
        value: input.value,
        valueType: input.valueType,
        isOverridable: input.isOverridable ?? true,
        description: input.description,
        updatedBy: ctx.actor.id,
        ...(existing ? { createdAt: existing.createdAt } : {}),
      };
      const version = ifMatch ?? (existing?.version as number | undefined);
      const putOpts = version !== undefined ? { expectedVersion: version, what: `setting ${key}` } : { ifNotExists: true, what: `setting ${key}` };
      const stamped = store.stampForPut(item, putOpts);
      const ancestorChecks = ancestors.map((a) =>
        tx.check(keys.setting(prefixOfKind(h, a.kind), a.id, key), {
          condition: {
            expression: 'attribute_not_exists(#pk) OR (#o = :t AND #vt = :vt)',
            names: { '#pk': 'PK', '#o': 'isOverridable', '#vt': 'valueType' },
            values: { ':t': true, ':vt': input.valueType },
          },
          onConditionFailed: () => new AncestorCheckFailed('CONFLICT', 'ancestor'),
        }),
      );
      try {
        await withIfMatch(ifMatch, () =>
          store.transactWrite([
            scope.check,
            ...ancestorChecks,
            tx.put(item, putOpts),
            auditPut(ctx, {
              T, tenantId, action: existing ? 'setting.update' : 'setting.create', entityType: 'setting', entityId: `${ref.kind}/${ref.id}/${key}`,
              before: existing ? summaryOf(existing) : undefined, after: summaryOf(stamped),
            }, deps.now()),
          ]),
        );
      } catch (e) {
        if (e instanceof AncestorCheckFailed) throw await classify(ancestors, key, input.valueType);
        throw e;
      }
      return toPublic(stamped);
    },

    get: getOne,

    async delete(ctx: RequestContext, tenantId: string, ref: ScopeRef, key: string, ifMatch?: number): Promise<void> {
      const cur = await getOne(tenantId, ref, key);
      const scope = resolveScope(h, tenantId, ref, { allowUser: true });
      await withIfMatch(ifMatch, () =>
        store.transactWrite([
          tx.delete(keys.setting(scope.KIND, ref.id, key), { expectedVersion: ifMatch ?? cur.version, what: `setting ${key}` }),
          auditPut(ctx, { T, tenantId, action: 'setting.delete', entityType: 'setting', entityId: `${ref.kind}/${ref.id}/${key}`, before: cur as unknown as Item }, deps.now()),
        ]),
      );
    },

    /** The settings stored at one scope (one Query of its partition). */
    async ofScope(tenantId: string, ref: ScopeRef, o: PageOptions = {}): Promise<Page<Setting>> {
      const scope = resolveScope(h, tenantId, ref, { allowUser: true });
      const q = keys.settingsOfScope(scope.KIND, ref.id);
      const page = await store.query<Item>({ pk: q.pk, sk: { beginsWith: q.skPrefix }, limit: o.limit, cursor: o.cursor, filter: tenantFilter(tenantId) });
      return { items: page.items.map(toPublic), cursor: page.cursor };
    },

    /**
     * The effective settings of a scope (and of a user there): ≤ 2 waves. Wave 1 reads the scope
     * node (skipped when the caller passes `path`) with the scope's and the user's own settings;
     * wave 2 reads every ancestor's settings in parallel.
     */
    async effective(tenantId: string, ref: ScopeRef, o: { userId?: string; explain?: boolean; path?: ScopeRef[] } = {}): Promise<EffectiveSettings> {
      const scope = resolveScope(h, tenantId, ref);
      const user = o.userId ? resolveScope(h, tenantId, { kind: 'user', id: o.userId }, { allowUser: true, field: 'userId' }) : undefined;
      const pathP = o.path ? Promise.resolve(o.path) : ancestorsOf(tenantId, scope);
      const [path, above, own, mine] = await Promise.all([
        pathP,
        // Ancestors start as soon as the path is known: with a given path, all in one wave.
        pathP.then((p) => Promise.all(p.map((a) => readScopeSettings(prefixOfKind(h, a.kind), a.id, tenantId)))),
        readScopeSettings(scope.KIND, ref.id, tenantId),
        user ? readScopeSettings(user.KIND, user.ref.id, tenantId) : Promise.resolve([]),
      ]);
      const chain = [
        ...path.map((scopeRef, i) => ({ scope: scopeRef, settings: above[i] })),
        { scope: ref, settings: own },
        ...(user ? [{ scope: user.ref, settings: mine }] : []),
      ];
      return { scope: ref, ...(o.userId ? { userId: o.userId } : {}), chain: chain.map((c) => c.scope), ...resolveChain(chain, !!o.explain) };
    },
  };
}

export type SettingService = ReturnType<typeof createSettingService>;
