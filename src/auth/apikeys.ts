/**
 * API keys for machines: `gh_<keyId>_<secret>`, bound to one tenant and one role.
 *
 *  - Shown once: the full key is returned by `create` only; the table holds the SHA-256 of the
 *    secret. The secret is 256 random bits, so a fast hash is enough: a slow KDF (scrypt, argon2)
 *    protects low-entropy passwords against guessing, and nobody can enumerate 2^256 secrets.
 *  - Prefix-identifiable: `gh_<keyId>` names the key in listings, logs and audit without the secret.
 *  - Verification is ONE strongly consistent GetItem by key id, on every request, with no cache:
 *    a revoked key is refused by the next request on every instance.
 *  - Revocation keeps the item (status `revoked`, TTL 90 days) so listings and audits show it.
 *  - No escalation: a caller can only mint a key whose role (with everything it inherits) grants
 *    nothing the caller does not hold at the tenant's scope (`create`'s `grantorAt`, from the
 *    authorizer). Only the system context (CLI, seeding) mints without it.
 *  - Last-used time lives in a separate item (`APIKEY#<id> / USAGE`), touched at most once a
 *    minute per key per instance, so a busy key is no hot write and its ETag does not move.
 *
 * Items: `APIKEY#<id> / METADATA` (GSI1 `<T>#<tid>` / `APIKEY#<id>` lists a tenant's keys),
 * `APIKEY#<id> / USAGE`.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { ulid } from 'ulid';
import { auditPut } from '../audit/record.ts';
import type { RequestContext } from '../context.ts';
import { GatehouseError, notFound, validation } from '../errors.ts';
import type { Principal } from '../http/caller.ts';
import type { CompiledRule } from '../access/model.ts';
import type { Grantor } from './authorizer.ts';
import { keys } from '../store/keys.ts';
import { tx, type Item, type Page, type Store } from '../store/store.ts';
import type { Hierarchy } from '../tenancy/model.ts';

export const API_KEY_PREFIX = 'gh';
const KEY_RE = /^gh_([0-9A-HJKMNP-TV-Z]{26})_([A-Za-z0-9_-]{43})$/;
/** Roles a tenant-bound key may never hold. */
export const PLATFORM_ONLY_ROLES = new Set(['platform-admin']);
export const REVOKED_RETENTION_SECONDS = 90 * 24 * 3600;
export const USAGE_TOUCH_INTERVAL_MS = 60_000;

export interface ApiKey {
  id: string;
  tenantId: string;
  roleId: string;
  name: string;
  /** `gh_<id>`: how the key is recognized without its secret. */
  prefix: string;
  status: 'active' | 'revoked';
  createdBy: string;
  /** ISO instant after which the key is refused (absent: no expiry). */
  expiresAt?: string;
  revokedAt?: string;
  revokedBy?: string;
  /** Accurate to about a minute. */
  lastUsedAt?: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface ApiKeyInput {
  name: string;
  roleId: string;
  /** ISO date-time; must be in the future. */
  expiresAt?: string;
}

export interface CreateApiKeyOptions {
  /**
   * What the caller may grant at a tenant (`auth.grantorAt(principal, …)`), resolved alongside the
   * tenant and role reads. Required unless `ctx` is the system context (CLI, seeding), which mints
   * any role but a platform-only one.
   */
  grantorAt?: (tenantId: string) => Promise<Grantor>;
}

export interface CreatedApiKey {
  apiKey: ApiKey;
  /** The full key, `gh_<id>_<secret>`: shown once, never stored. */
  secret: string;
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

export const parseApiKey = (credential: string): { id: string; secret: string } | undefined => {
  const m = KEY_RE.exec(credential);
  return m ? { id: m[1], secret: m[2] } : undefined;
};

/** `gh_…`-shaped credentials (also the bootstrap `gh_dev_…` key) are API keys, not JWTs. */
export const looksLikeApiKey = (credential: string) => credential.startsWith(`${API_KEY_PREFIX}_`);

const epoch = (d: Date) => Math.floor(d.getTime() / 1000);

function view(it: Item, usage?: Item): ApiKey {
  const validUntil = it.validUntil as string | undefined;
  return {
    id: it.id as string,
    tenantId: it.tenantId as string,
    roleId: it.roleId as string,
    name: it.name as string,
    prefix: it.prefix as string,
    status: it.status as ApiKey['status'],
    createdBy: it.createdBy as string,
    ...(validUntil ? { expiresAt: validUntil } : {}),
    ...(it.revokedAt ? { revokedAt: it.revokedAt as string, revokedBy: it.revokedBy as string } : {}),
    ...(usage?.lastUsedAt ? { lastUsedAt: usage.lastUsedAt as string } : {}),
    version: it.version as number,
    createdAt: it.createdAt as string,
    updatedAt: it.updatedAt as string,
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;

export function createApiKeyService(deps: { store: Store; hierarchy: Pick<Hierarchy, 'T'>; now?: () => Date; touchIntervalMs?: number }) {
  const { store } = deps;
  const T = deps.hierarchy.T;
  const now = deps.now ?? (() => store.now());
  const touchInterval = deps.touchIntervalMs ?? USAGE_TOUCH_INTERVAL_MS;
  // Per instance: when this instance last wrote a key's usage item.
  const touched = new LRUCache<string, number>({ max: 50_000 });

  const keyOfTenant = async (tenantId: string, id: string): Promise<Item> => {
    if (!/^[0-9A-HJKMNP-TV-Z]{26}$/.test(id)) throw notFound('API key', id);
    const it = await store.get<Item>(keys.apiKey(id));
    if (!it || it.tenantId !== tenantId) throw notFound('API key', id);
    return it;
  };

  async function touch(id: string, at: Date) {
    const last = touched.get(id);
    if (last !== undefined && at.getTime() - last < touchInterval) return;
    touched.set(id, at.getTime());
    try {
      await store.update(keys.apiKeyUsage(id), { set: { Type: 'ApiKeyUsage', keyId: id, lastUsedAt: at.toISOString() }, mustExist: false });
    } catch {
      // Usage is informational: a failed touch never fails the request. Retry on the next one.
      touched.delete(id);
    }
  }

  return {
    async create(ctx: RequestContext, tenantId: string, input: ApiKeyInput, opts: CreateApiKeyOptions = {}): Promise<CreatedApiKey> {
      const name = typeof input.name === 'string' ? input.name.trim() : '';
      if (!name || name.length > 100) throw validation('name', 'Use 1-100 characters');
      if (typeof input.roleId !== 'string' || !input.roleId) throw validation('roleId', 'Required');
      let validUntil: string | undefined;
      if (input.expiresAt !== undefined) {
        const ms = Date.parse(input.expiresAt);
        if (Number.isNaN(ms)) throw validation('expiresAt', 'Must be an ISO date-time');
        if (ms <= now().getTime()) throw validation('expiresAt', 'Must be in the future');
        validUntil = new Date(ms).toISOString();
      }
      if (PLATFORM_ONLY_ROLES.has(input.roleId)) throw validation('roleId', 'A tenant API key cannot hold a platform role');
      // Fail closed: only the system context may mint without the caller rule.
      if (!opts.grantorAt && ctx.actor.type !== 'system') throw new GatehouseError('INTERNAL', 'API keys minted for a user or key need grantorAt (the caller rule)');
      // One wave: what the caller holds is read alongside the tenant and the role.
      const [tenant, role, grantor] = await Promise.all([
        store.get<Item>(keys.tenant(T, tenantId)),
        store.get<Item>(keys.role(input.roleId)),
        opts.grantorAt?.(tenantId),
      ]);
      if (!tenant) throw notFound('tenant', tenantId);
      const roleUsable = role && (role.scope === 'global' || role.tenantId === tenantId);
      if (!roleUsable) throw new GatehouseError('NOT_FOUND', `roleId: no role ${input.roleId} in this tenant`, { errors: [{ field: 'roleId', message: 'Not found in this tenant' }] });
      if (grantor) {
        // The role's compiled rules: its own and every ancestor's.
        const missing = await grantor.lacking((role.effectivePermissions ?? role.permissions ?? []) as CompiledRule[]);
        if (missing.length) {
          throw new GatehouseError(
            'FORBIDDEN',
            `roleId: role ${input.roleId} grants ${missing.join(', ')}, which this caller does not hold in tenant ${tenantId}. A key can only hold what its creator holds: choose a role within your own permissions, or ask an administrator who holds them.`,
            { missingPermissions: missing, errors: missing.map((p) => ({ field: 'roleId', message: `The role grants ${p}, which the caller does not hold` })) },
          );
        }
      }

      const id = ulid(now().getTime());
      const secret = randomBytes(32).toString('base64url');
      const item = {
        ...keys.apiKey(id),
        ...keys.apiKeyIndex(T, tenantId, id),
        Type: 'ApiKey',
        id,
        tenantId,
        roleId: input.roleId,
        name,
        prefix: `${API_KEY_PREFIX}_${id}`,
        secretHash: sha256(secret),
        status: 'active',
        createdBy: ctx.actor.id,
        ...(validUntil ? { validUntil, expiresAt: epoch(new Date(validUntil)) + REVOKED_RETENTION_SECONDS } : {}),
      };
      const stamped = store.stampForPut(item);
      await store.transactWrite([
        tx.put(item, { ifNotExists: true }),
        // The role and tenant must still be there when the key is written.
        tx.check(keys.tenant(T, tenantId), { mustExist: true, onConditionFailed: () => notFound('tenant', tenantId) }),
        // Under the caller rule, the role must still be the version it was compared at.
        tx.check(keys.role(input.roleId), {
          mustExist: true,
          ...(grantor ? { expectedVersion: role.version as number } : {}),
          onConditionFailed: () => (grantor ? new GatehouseError('VERSION_CONFLICT', `Role ${input.roleId} changed or was deleted while the key was being created; retry`) : notFound('role', input.roleId)),
        }),
        auditPut(ctx, { T, tenantId, action: 'apikey.create', entityType: 'ApiKey', entityId: id, after: view(stamped) as unknown as Record<string, unknown> }, now()),
      ]);
      return { apiKey: view(stamped), secret: `${API_KEY_PREFIX}_${id}_${secret}` };
    },

    async get(tenantId: string, id: string): Promise<ApiKey> {
      const it = await keyOfTenant(tenantId, id);
      const usage = await store.get<Item>(keys.apiKeyUsage(id));
      return view(it, usage);
    },

    async list(tenantId: string, page: { limit?: number; cursor?: string | null } = {}): Promise<Page<ApiKey>> {
      const q = keys.apiKeysOfTenant(T, tenantId);
      const res = await store.query<Item>({ index: q.index, pk: q.pk, sk: { beginsWith: q.skPrefix }, limit: page.limit ?? 25, cursor: page.cursor });
      const usage = res.items.length ? await store.batchGet<Item>(res.items.map((it) => keys.apiKeyUsage(it.id as string))) : [];
      const byId = new Map(usage.map((u) => [u.keyId as string, u]));
      return { items: res.items.map((it) => view(it, byId.get(it.id as string))), cursor: res.cursor };
    },

    /** Revokes a key; the next request with it fails on every instance. Revoking twice is a no-op. */
    async revoke(ctx: RequestContext, tenantId: string, id: string, expectedVersion?: number): Promise<ApiKey> {
      const it = await keyOfTenant(tenantId, id);
      if (expectedVersion !== undefined && it.version !== expectedVersion) {
        throw new GatehouseError('PRECONDITION_FAILED', `API key ${id} is no longer at version ${expectedVersion}; re-read it and retry`, { entity: 'API key' });
      }
      if (it.status === 'revoked') return view(it);
      const at = now();
      const set = { status: 'revoked', revokedAt: at.toISOString(), revokedBy: ctx.actor.id, expiresAt: epoch(at) + REVOKED_RETENTION_SECONDS };
      await store.transactWrite([
        tx.update(keys.apiKey(id), {
          set,
          expectedVersion: it.version as number,
          condition: { expression: '#t = :t', names: { '#t': 'tenantId' }, values: { ':t': tenantId } },
          onConditionFailed: () =>
            expectedVersion !== undefined
              ? new GatehouseError('PRECONDITION_FAILED', `API key ${id} is no longer at version ${expectedVersion}; re-read it and retry`)
              : new GatehouseError('VERSION_CONFLICT', `API key ${id} changed while it was being revoked; retry`),
        }),
        auditPut(ctx, { T, tenantId, action: 'apikey.revoke', entityType: 'ApiKey', entityId: id, before: view(it) as unknown as Record<string, unknown> }, at),
      ]);
      touched.delete(id);
      return view({ ...it, ...set, version: (it.version as number) + 1, updatedAt: at.toISOString() });
    },

    /**
     * Authenticates `gh_<id>_<secret>`: one strongly consistent GetItem, constant-time hash
     * comparison, status and expiry. Returns undefined for credentials that are not API keys.
     */
    async verify(credential: string): Promise<Principal | undefined> {
      if (!looksLikeApiKey(credential)) return undefined;
      const parsed = parseApiKey(credential);
      const reject = () => new GatehouseError('UNAUTHENTICATED', 'The API key is not valid (unknown, revoked or expired)');
      if (!parsed) throw reject();
      const it = await store.get<Item>(keys.apiKey(parsed.id), { consistent: true });
      if (!it || typeof it.secretHash !== 'string') throw reject();
      const a = Buffer.from(sha256(parsed.secret), 'hex');
      const b = Buffer.from(it.secretHash, 'hex');
      if (a.length !== b.length || !timingSafeEqual(a, b)) throw reject();
      const at = now();
      if (it.status !== 'active') throw reject();
      if (typeof it.validUntil === 'string' && Date.parse(it.validUntil) <= at.getTime()) throw reject();
      void touch(parsed.id, at);
      return {
        actor: { id: `${API_KEY_PREFIX}_${parsed.id}`, type: 'apiKey', tenantId: it.tenantId as string },
        platformAdmin: false,
        kind: 'apiKey',
        roleId: it.roleId as string,
      };
    },
  };
}
