/**
 * Opaque pagination cursors: the query's LastEvaluatedKey, HMAC-signed with a server secret and
 * bound to the query that produced it. A forged, altered or foreign cursor is INVALID_CURSOR.
 * (Run several instances with the same GATEHOUSE_CURSOR_SECRET so their cursors are interchangeable.)
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { GatehouseError } from '../errors.ts';

const invalid = (why: string) =>
  new GatehouseError('INVALID_CURSOR', `The cursor is not valid for this request (${why}); start again without a cursor`, {
    errors: [{ field: 'cursor', message: why }],
  });

export class CursorCodec {
  private readonly secret: Buffer;
  constructor(secret: string | Buffer) {
    this.secret = Buffer.isBuffer(secret) ? secret : Buffer.from(secret, 'utf8');
  }

  /** A short digest of what the query is: its index, key condition, order and filter. */
  static binding(query: unknown): string {
    return createHash('sha256').update(JSON.stringify(query)).digest('base64url').slice(0, 16);
  }

  private sign(payload: string) {
    return createHmac('sha256', this.secret).update(payload).digest('base64url');
  }

  encode(lastKey: Record<string, unknown>, binding: string): string {
    const payload = Buffer.from(JSON.stringify({ b: binding, k: lastKey }), 'utf8').toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  decode(cursor: string, binding: string): Record<string, unknown> {
    const dot = cursor.indexOf('.');
    if (dot <= 0 || cursor.length > 4096) throw invalid('malformed');
    const payload = cursor.slice(0, dot);
    const given = Buffer.from(cursor.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.sign(payload), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid('signature mismatch');
    let parsed: { b?: unknown; k?: unknown };
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalid('malformed');
    }
    if (parsed.b !== binding) throw invalid('it belongs to another query');
    if (!parsed.k || typeof parsed.k !== 'object') throw invalid('malformed');
    return parsed.k as Record<string, unknown>;
  }
}
