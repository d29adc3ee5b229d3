/**
 * Who is acting and on which request: passed to every mutation so its audit record (written in
 * the same transaction) can name the actor, request id, ip and user agent.
 */
export interface Actor {
  /** A user id, an API key id, or `system` for jobs and seeding. */
  id: string;
  type: 'user' | 'apiKey' | 'system';
  /** The tenant an API key or user acts for, when bound to one. */
  tenantId?: string;
}

export interface RequestContext {
  actor: Actor;
  requestId?: string;
  ip?: string;
  userAgent?: string;
}

export const systemContext = (requestId?: string): RequestContext => ({ actor: { id: 'system', type: 'system' }, requestId });
