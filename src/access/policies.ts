/**
 * Policy metadata (003: tracks externally stored policies, e.g. Verified Permissions):
 * `GLOBAL / POLICY_NAME#<name>` (exact name = GetItem; prefix = Query begins_with) and GSI2
 * `POLICY#<id>` (by id). Platform-level; audited under PLATFORM_AUDIT. Policies do not take part in
 * Gatehouse's own decisions, so no stamp moves.
 */
import { ulid } from 'ulid';
import { auditPut, PLATFORM_AUDIT } from '../audit/record.ts';
import type { RequestContext } from '../context.ts';
import { GatehouseError, notFound, validation } from '../errors.ts';
import { keys } from '../store/keys.ts';
import { tx, type Page, type TxAction } from '../store/store.ts';
import { checkId, preconditionFailed, publicOf, type AccessDeps } from './common.ts';
import type { PolicyRecord } from './model.ts';

export interface PolicyInput {
  name: string;
  /** The external policy id; a ULID when absent. */
  id?: string;
  description?: string;
  attributes?: Record<string, unknown>;
}

export type PoliciesService = ReturnType<typeof createPolicies>;

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,199}$/;

export function createPolicies({ store }: AccessDeps) {
  const checkPolicyName = (name: unknown) => {
    if (typeof name !== 'string' || !NAME_RE.test(name)) throw validation('name', 'Use 1-200 letters, digits, or _ . : / - (no spaces)');
    return name;
  };
  const item = (p: Omit<PolicyRecord, 'version' | 'createdAt' | 'updatedAt'> & { createdAt?: string }) => ({
    ...keys.policyName(p.name),
    ...keys.policyIndex(p.id),
    Type: 'Policy',
    ...p,
  });
  const audit = (ctx: RequestContext, action: string, id: string, extra: Record<string, unknown>) =>
    auditPut(ctx, { ...PLATFORM_AUDIT, action, entityType: 'Policy', entityId: id, ...extra }, store.now());

  async function byId(id: string): Promise<PolicyRecord> {
    checkId('policyId', id);
    const q = keys.policyById(id);
    const page = await store.query<PolicyRecord>({ index: q.index, pk: q.pk, limit: 1 });
    if (!page.items[0]) throw notFound('policy', id);
    return publicOf<PolicyRecord>(page.items[0]);
  }

  async function byName(name: string): Promise<PolicyRecord> {
    const p = await store.get<PolicyRecord>(keys.policyName(checkPolicyName(name)));
    if (!p) throw notFound('policy', name);
    return publicOf<PolicyRecord>(p);
  }

  return {
    async create(ctx: RequestContext, input: PolicyInput): Promise<PolicyRecord> {
      const name = checkPolicyName(input?.name);
      const id = input.id ?? ulid();
      checkId('id', id);
      if (input.description !== undefined && (typeof input.description !== 'string' || input.description.length > 1000)) throw validation('description', 'At most 1000 characters');
      const it = item({ id, name, description: input.description, attributes: input.attributes });
      await store.transactWrite([
        tx.put(it, { ifNotExists: true, onConditionFailed: () => new GatehouseError('CONFLICT', `A policy named ${name} already exists`, { errors: [{ field: 'name', message: 'Already exists' }] }) }),
        audit(ctx, 'policy.create', id, { after: it }),
      ]);
      return publicOf<PolicyRecord>(store.stampForPut(it));
    },

    /** 003 "policy by exact name": one GetItem. */
    byName,

    /** 003 "policy by id": one Query on GSI2 `POLICY#<id>`. */
    byId,

    /** 003 "policies by name prefix": one Query `GLOBAL` / begins_with `POLICY_NAME#<prefix>`. */
    async list(opts: { prefix?: string; limit?: number; cursor?: string } = {}): Promise<Page<PolicyRecord>> {
      const q = keys.policyNames(opts.prefix ?? '');
      const page = await store.query<PolicyRecord>({ pk: q.pk, sk: { beginsWith: q.skPrefix }, limit: opts.limit, cursor: opts.cursor });
      return { items: page.items.map((i) => publicOf<PolicyRecord>(i)), cursor: page.cursor };
    },

    /** Renames / re-describes (If-Match optional); a rename moves the item in one transaction. */
    async update(ctx: RequestContext, id: string, patch: { name?: string; description?: string | null; attributes?: Record<string, unknown> }, expectedVersion?: number): Promise<PolicyRecord> {
      const cur = await byId(id);
      // The index may lag: re-read the base item strongly and check it is still this policy.
      const base = await store.get<PolicyRecord>(keys.policyName(cur.name));
      if (!base || base.id !== id) throw notFound('policy', id);
      if (expectedVersion !== undefined && base.version !== expectedVersion) throw preconditionFailed(`policy ${id}`, expectedVersion)();
      const name = patch.name !== undefined ? checkPolicyName(patch.name) : base.name;
      const next = { ...publicOf<PolicyRecord>(base), name, ...(patch.attributes !== undefined ? { attributes: patch.attributes } : {}) };
      if (patch.description === null) delete next.description;
      else if (patch.description !== undefined) next.description = patch.description;
      const it = item(next);
      const actions: TxAction[] =
        name === base.name
          ? [tx.put(it, { expectedVersion: base.version, onConditionFailed: preconditionFailed(`policy ${id}`, base.version) })]
          : [
              tx.delete(keys.policyName(base.name), { expectedVersion: base.version, onConditionFailed: preconditionFailed(`policy ${id}`, base.version) }),
              tx.put({ ...it, version: base.version + 1 }, { ifNotExists: true, onConditionFailed: () => new GatehouseError('CONFLICT', `A policy named ${name} already exists`, { errors: [{ field: 'name', message: 'Already exists' }] }) }),
            ];
      await store.transactWrite([...actions, audit(ctx, 'policy.update', id, { before: base, after: it })]);
      return byName(name);
    },

    async remove(ctx: RequestContext, id: string) {
      const cur = await byId(id);
      await store.transactWrite([
        tx.delete(keys.policyName(cur.name), { condition: { expression: '#i = :i', names: { '#i': 'id' }, values: { ':i': id } }, onConditionFailed: () => notFound('policy', id) }),
        audit(ctx, 'policy.delete', id, { before: cur, severity: 'warning' }),
      ]);
      return { id, deleted: true };
    },
  };
}
