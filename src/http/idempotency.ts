/**
 * `Idempotency-Key` on creates (POST): a retried request with the same key gets the first
 * response replayed instead of creating a second resource.
 *
 *  - Scope: per caller (the authenticated principal) and key: `IDEMPOTENCY#<caller>#<key>`.
 *  - The first request claims the key with a conditional put (`attribute_not_exists`), so two
 *    concurrent requests with one key never both run: the second gets 409 while the first is in
 *    flight. Once it succeeds (2xx) its status, body and headers (Location, ETag, Content-Type) are
 *    stored and replayed to any retry, with `Idempotent-Replayed: true`.
 *  - Same key, different request (method, path, query or body bytes) → 422 UNPROCESSABLE.
 *  - A non-2xx outcome releases the key (nothing was created; a retry runs again).
 *  - Records expire through TTL (`expiresAt`, default 24 h); an expired record not yet removed by
 *    TTL is treated as absent (TTL deletes lazily).
 */
import { createHash } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { GatehouseError, validation } from '../errors.ts';
import { keys } from '../store/keys.ts';
import type { Item, Store } from '../store/store.ts';
import type { AppEnv } from './deps.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const DEFAULT_IDEMPOTENCY_TTL_SECONDS = 24 * 3600;
const KEY_RE = /^[A-Za-z0-9_.:+/=-]{1,255}$/;
const REPLAYED_HEADERS = ['content-type', 'location', 'etag'];
/** Responses larger than this are not stored (the key is released): far below DynamoDB's 400 KB. */
const MAX_STORED_BODY = 300 * 1024;

const epoch = (ms: number) => Math.floor(ms / 1000);

export function idempotency(opts: { store: Store; ttlSeconds?: number; now?: () => Date }): MiddlewareHandler<AppEnv> {
  const { store } = opts;
  const ttl = opts.ttlSeconds ?? DEFAULT_IDEMPOTENCY_TTL_SECONDS;
  const now = opts.now ?? (() => store.now());

  return async (c, next) => {
    const key = c.req.header(IDEMPOTENCY_HEADER);
    const p = c.get('principal');
    if (key === undefined || c.req.method !== 'POST' || !p) return next();
    if (!KEY_RE.test(key)) throw validation('header.Idempotency-Key', 'Use 1-255 characters: letters, digits, _ . : + / = -');

    const body = new Uint8Array(await c.req.arrayBuffer());
    const url = new URL(c.req.url);
    const fingerprint = createHash('sha256').update(`${c.req.method}\n${url.pathname}${url.search}\n`).update(body).digest('hex');
    const callerId = `${p.actor.type}:${p.actor.id}`;
    const itemKey = keys.idempotency(callerId, key);
    const t = now().getTime();

    const taken = new GatehouseError('CONFLICT', 'The Idempotency-Key is taken');
    const claim = async (): Promise<boolean> => {
      try {
        await store.put(
          { ...itemKey, Type: 'IdempotencyRecord', state: 'pending', fingerprint, method: c.req.method, path: url.pathname, expiresAt: epoch(t) + ttl },
          // Absent, or expired but not yet deleted by TTL.
          { condition: { expression: 'attribute_not_exists(#pk) OR #exp < :now', names: { '#pk': 'PK', '#exp': 'expiresAt' }, values: { ':now': epoch(t) } }, onConditionFailed: () => taken },
        );
        return true;
      } catch (e) {
        if (e === taken) return false;
        throw e;
      }
    };

    if (!(await claim())) {
      const rec = await store.get<Item>(itemKey);
      if (!rec || (rec.expiresAt as number) < epoch(t)) {
        // Released or expired in between: claim again once.
        if (!(await claim())) throw new GatehouseError('CONFLICT', 'A request with this Idempotency-Key is in progress; retry shortly');
      } else {
        if (rec.fingerprint !== fingerprint) {
          throw new GatehouseError('UNPROCESSABLE', 'This Idempotency-Key was used with a different request (method, path or body); use a new key', {
            errors: [{ field: 'header.Idempotency-Key', message: 'Already used for a different request' }],
          });
        }
        if (rec.state !== 'done') throw new GatehouseError('CONFLICT', 'A request with this Idempotency-Key is in progress; retry shortly');
        const headers = { ...(rec.headers as Record<string, string>), 'idempotent-replayed': 'true' };
        return c.body(rec.body as string, rec.status as ContentfulStatusCode, headers);
      }
    }

    let stored = false;
    try {
      await next();
      const res = c.res;
      if (res.status >= 200 && res.status < 300 && !c.error) {
        const text = await res.clone().text();
        if (Buffer.byteLength(text) <= MAX_STORED_BODY) {
          const headers: Record<string, string> = {};
          for (const h of REPLAYED_HEADERS) {
            const v = res.headers.get(h);
            if (v !== null) headers[h] = v;
          }
          await store.put({ ...itemKey, Type: 'IdempotencyRecord', state: 'done', fingerprint, method: c.req.method, path: url.pathname, status: res.status, headers, body: text, expiresAt: epoch(t) + ttl });
          stored = true;
        }
      }
    } finally {
      if (!stored) await store.delete(itemKey).catch(() => undefined);
    }
  };
}
