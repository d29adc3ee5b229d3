/**
 * Login sessions (TTL 90 days) and tokens (refresh / API, TTL 30 days) under the user (001).
 * TTL deletes items within about two days of `expiresAt`, so every read treats an item past its
 * `expiresAt` (or revoked) as gone. Only a SHA-256 hash of a token's secret is stored; the secret
 * is returned once, at creation. "Revoke all" is one item: sessions and refresh tokens issued
 * before its instant are revoked — one write whatever the number of sessions.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { decodeTime, isValid as isUlid, ulid } from 'ulid';
import type { RequestContext } from '../context.ts';
import { GatehouseError, notFound, validation } from '../errors.ts';
import { keys } from '../store/keys.ts';
import { tx, type Item, type Page, type TxAction } from '../store/store.ts';
import { auditPut } from '../audit/record.ts';
import { epochSeconds, publicOf, tenantOwned, type ServiceDeps } from '../entitlements/common.ts';
import type { PageOptions } from '../entitlements/licenses.ts';

export const SESSION_TTL_DAYS = 90;
export const TOKEN_TTL_DAYS = 30;

export interface Session {
  id: string;
  userId: string;
  tenantId: string;
  ssoProvider?: string;
  sessionStart: string;
  ip?: string;
  userAgent?: string;
  deviceInfo?: Record<string, unknown>;
  mfaVerified: boolean;
  location?: string;
  status: 'active' | 'revoked';
  revokedAt?: string;
  revokedBy?: string;
  expiresAt: number;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export type TokenType = 'refresh' | 'api';

export interface Token {
  id: string;
  userId: string;
  tenantId: string;
  tokenType: TokenType;
  name?: string;
  sessionId?: string;
  deviceId?: string;
  issuedAt: string;
  expiresAt: number;
  revoked: boolean;
  revokedAt?: string;
  revokedBy?: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface SessionInput {
  ssoProvider?: string;
  ip?: string;
  userAgent?: string;
  deviceInfo?: Record<string, unknown>;
  mfaVerified?: boolean;
  location?: string;
}

export interface TokenInput {
  tokenType: TokenType;
  name?: string;
  sessionId?: string;
  deviceId?: string;
  /** Shorter lifetimes are allowed; never more than 30 days. */
  ttlDays?: number;
}

const hashOf = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');
const TOKEN_PREFIX = 'ght';

export function createSessionService(deps: Pick<ServiceDeps, 'store' | 'hierarchy' | 'now'>) {
  const { store, hierarchy: h } = deps;
  const T = h.T;

  const userCheck = (tenantId: string, userId: string) => tenantOwned(keys.user(userId), tenantId, () => notFound('user', userId));
  const audit = (ctx: RequestContext, tenantId: string, action: string, entityType: string, entityId: string, e: { before?: Item; after?: Item; related?: Item } = {}): TxAction =>
    auditPut(ctx, { T, tenantId, action, entityType, entityId, ...e }, deps.now());

  /** The user (must be the tenant's) and the revoke-all marker, read in one wave. */
  async function userAndMarker(tenantId: string, userId: string) {
    const [user, marker] = await Promise.all([store.get<Item>(keys.user(userId)), store.get<Item>(keys.sessionsRevoked(userId))]);
    if (!user || user.tenantId !== tenantId) throw notFound('user', userId);
    return (marker?.revokedBefore as string | undefined) ?? '';
  }

  const nowS = () => epochSeconds(deps.now());

  const sessionLive = (s: Item, revokedBefore: string) => s.status === 'active' && (s.expiresAt as number) > nowS() && (s.sessionStart as string) >= revokedBefore;
  const tokenLive = (t: Item, revokedBefore: string) =>
    t.revoked !== true && (t.expiresAt as number) > nowS() && !(t.tokenType === 'refresh' && (t.issuedAt as string) < revokedBefore);

  const sessionKey = (userId: string, id: string) => {
    if (!isUlid(id)) throw notFound('session', id);
    return keys.session(userId, new Date(decodeTime(id)).toISOString(), id);
  };

  const liveFilter = () => ({ expression: '#exp > :now', names: { '#exp': 'expiresAt' }, values: { ':now': nowS() } });

  return {
    async createSession(ctx: RequestContext, tenantId: string, userId: string, input: SessionInput = {}): Promise<Session> {
      const now = deps.now();
      const id = ulid(now.getTime());
      const sessionStart = new Date(decodeTime(id)).toISOString();
      const item = {
        ...keys.session(userId, sessionStart, id),
        Type: 'LoginSession',
        id,
        userId,
        tenantId,
        ...input,
        mfaVerified: input.mfaVerified ?? false,
        sessionStart,
        status: 'active' as const,
        expiresAt: epochSeconds(now) + SESSION_TTL_DAYS * 86400,
      };
      const stamped = store.stampForPut(item);
      await store.transactWrite([userCheck(tenantId, userId), tx.put(item, { ifNotExists: true }), audit(ctx, tenantId, 'session.create', 'session', id, { after: publicOf(stamped), related: { userId } })]);
      return publicOf<Session>(stamped);
    },

    /** A user's live sessions, newest first (expired and revoked ones are gone). */
    async sessions(tenantId: string, userId: string, o: PageOptions = {}): Promise<Page<Session>> {
      const q = keys.sessionsOfUser(userId);
      const [revokedBefore, page] = await Promise.all([
        userAndMarker(tenantId, userId),
        store.query<Item>({ pk: q.pk, sk: { beginsWith: q.skPrefix }, ascending: false, limit: o.limit, cursor: o.cursor, filter: liveFilter() }),
      ]);
      return { items: page.items.filter((s) => sessionLive(s, revokedBefore)).map((s) => publicOf<Session>(s)), cursor: page.cursor };
    },

    /** A live session, or NOT_FOUND (expired, revoked, or another tenant's). */
    async getSession(tenantId: string, userId: string, id: string): Promise<Session> {
      const [revokedBefore, s] = await Promise.all([userAndMarker(tenantId, userId), store.get<Item>(sessionKey(userId, id))]);
      if (!s || s.tenantId !== tenantId || !sessionLive(s, revokedBefore)) throw notFound('session', id);
      return publicOf<Session>(s);
    },

    async revokeSession(ctx: RequestContext, tenantId: string, userId: string, id: string): Promise<void> {
      const at = deps.now().toISOString();
      await store.transactWrite([
        tx.update(sessionKey(userId, id), {
          set: { status: 'revoked', revokedAt: at, revokedBy: ctx.actor.id },
          condition: {
            expression: '#s = :a AND #exp > :now AND #tid = :tid',
            names: { '#s': 'status', '#exp': 'expiresAt', '#tid': 'tenantId' },
            values: { ':a': 'active', ':now': nowS(), ':tid': tenantId },
          },
          onConditionFailed: () => notFound('session', id),
        }),
        audit(ctx, tenantId, 'session.revoke', 'session', id, { related: { userId } }),
      ]);
    },

    /** Revokes every session (and refresh token) of the user issued up to now: one write. */
    async revokeAll(ctx: RequestContext, tenantId: string, userId: string): Promise<{ revokedBefore: string }> {
      // The next ULID millisecond: a session started in this very millisecond is revoked too.
      const revokedBefore = new Date(deps.now().getTime() + 1).toISOString();
      await store.transactWrite([
        userCheck(tenantId, userId),
        tx.put({ ...keys.sessionsRevoked(userId), Type: 'SessionsRevoked', userId, tenantId, revokedBefore, revokedBy: ctx.actor.id }),
        audit(ctx, tenantId, 'session.revoke_all', 'user', userId, { after: { revokedBefore } }),
      ]);
      return { revokedBefore };
    },

    /** Issues a token; the secret is in the result once and never stored. */
    async createToken(ctx: RequestContext, tenantId: string, userId: string, input: TokenInput): Promise<Token & { secret: string }> {
      const ttlDays = input.ttlDays ?? TOKEN_TTL_DAYS;
      if (!(ttlDays > 0 && ttlDays <= TOKEN_TTL_DAYS)) throw validation('ttlDays', `Must be more than 0 and at most ${TOKEN_TTL_DAYS}`);
      const now = deps.now();
      const id = ulid(now.getTime());
      const secret = `${TOKEN_PREFIX}_${input.tokenType}.${userId}.${id}.${randomBytes(32).toString('base64url')}`;
      const item = {
        ...keys.token(userId, id),
        Type: 'AuthToken',
        id,
        userId,
        tenantId,
        tokenType: input.tokenType,
        name: input.name,
        sessionId: input.sessionId,
        deviceId: input.deviceId,
        secretHash: hashOf(secret),
        issuedAt: now.toISOString(),
        expiresAt: epochSeconds(now) + Math.floor(ttlDays * 86400),
        revoked: false,
      };
      const stamped = store.stampForPut(item);
      const { secretHash: _h, ...rest } = publicOf<Token & { secretHash: string }>(stamped);
      await store.transactWrite([userCheck(tenantId, userId), tx.put(item, { ifNotExists: true }), audit(ctx, tenantId, 'token.create', 'token', id, { after: rest as unknown as Item, related: { userId } })]);
      return { ...rest, secret };
    },

    async tokens(tenantId: string, userId: string, o: PageOptions = {}): Promise<Page<Token>> {
      const q = keys.tokensOfUser(userId);
      const [revokedBefore, page] = await Promise.all([
        userAndMarker(tenantId, userId),
        store.query<Item>({ pk: q.pk, sk: { beginsWith: q.skPrefix }, ascending: false, limit: o.limit, cursor: o.cursor, filter: liveFilter() }),
      ]);
      return {
        items: page.items.filter((t) => t.tenantId === tenantId && tokenLive(t, revokedBefore)).map((t) => {
          const { secretHash: _h, ...rest } = publicOf<Token & { secretHash?: string }>(t);
          return rest;
        }),
        cursor: page.cursor,
      };
    },

    async revokeToken(ctx: RequestContext, tenantId: string, userId: string, id: string): Promise<void> {
      await store.transactWrite([
        tx.update(keys.token(userId, id), {
          set: { revoked: true, revokedAt: deps.now().toISOString(), revokedBy: ctx.actor.id },
          condition: {
            expression: '#r = :f AND #exp > :now AND #tid = :tid',
            names: { '#r': 'revoked', '#exp': 'expiresAt', '#tid': 'tenantId' },
            values: { ':f': false, ':now': nowS(), ':tid': tenantId },
          },
          onConditionFailed: () => notFound('token', id),
        }),
        audit(ctx, tenantId, 'token.revoke', 'token', id, { related: { userId } }),
      ]);
    },

    /**
     * Verifies a presented secret: the live token it names, or UNAUTHENTICATED. One wave (token and
     * revoke-all marker); the hash is compared in constant time.
     */
    async verifyToken(secret: string): Promise<Token> {
      const bad = () => new GatehouseError('UNAUTHENTICATED', 'The token is invalid, expired or revoked');
      const m = /^ght_(refresh|api)\.([A-Za-z0-9_.:-]+)\.([0-9A-HJKMNP-TV-Z]{26})\.[A-Za-z0-9_-]{43}$/.exec(secret);
      if (!m) throw bad();
      const [, , userId, id] = m;
      const [t, marker] = await Promise.all([store.get<Item>(keys.token(userId, id)), store.get<Item>(keys.sessionsRevoked(userId))]);
      if (!t) throw bad();
      const a = Buffer.from(String(t.secretHash), 'hex');
      const b = Buffer.from(hashOf(secret), 'hex');
      if (a.length !== b.length || !timingSafeEqual(a, b) || !tokenLive(t, (marker?.revokedBefore as string | undefined) ?? '')) throw bad();
      const { secretHash: _h, ...rest } = publicOf<Token & { secretHash: string }>(t);
      return rest;
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
