/**
 * The declarative route map: `METHOD /path/{param}` → the permission the route declares and where
 * its tenant comes from. Derived from the app itself (every /v1 route declares
 * `authorize(permission)`, whose middleware carries `.permission`), so the Lambda authorizer, the
 * deploy template's routes and the isolation suite never drift from the routes that exist.
 */
import type { Hono } from 'hono';

export interface RouteRule {
  permission: string;
  /** The path parameter naming the tenant; absent for platform routes. */
  tenantParam?: 'tenantId';
}

/** Keys are API Gateway / OpenAPI route keys: `GET /v1/tenants/{tenantId}/users`. */
export type RouteMap = Record<string, RouteRule>;

const toOpenApiPath = (honoPath: string) => honoPath.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, '{$1}');

/** Reads the map from a built app. Routes without a declared permission (public ones) are not in it. */
export function routeMapOf(app: Pick<Hono, 'routes'>): RouteMap {
  const map: RouteMap = {};
  for (const r of app.routes) {
    const permission = (r.handler as { permission?: unknown }).permission;
    if (typeof permission !== 'string' || r.method === 'ALL') continue;
    const path = toOpenApiPath(r.path);
    map[`${r.method.toUpperCase()} ${path}`] = { permission, ...(/\{tenantId\}/.test(path) ? { tenantParam: 'tenantId' as const } : {}) };
  }
  return Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : 1)));
}

interface Compiled {
  routeKey: string;
  method: string;
  segments: string[];
  rule: RouteRule;
}

export interface RouteMatch {
  routeKey: string;
  rule: RouteRule;
  params: Record<string, string>;
}

/** Matches a concrete request against the map; literal segments win over parameters. */
export function createRouteMatcher(map: RouteMap) {
  const compiled: Compiled[] = Object.entries(map).map(([routeKey, rule]) => {
    const [method, path] = routeKey.split(' ');
    return { routeKey, method, segments: path.split('/').filter(Boolean), rule };
  });
  // More literal segments first, then earlier literals: `/roles/by-name/{n}` before `/roles/{id}/…`.
  const score = (c: Compiled) => c.segments.map((s) => (s.startsWith('{') ? '1' : '0')).join('');
  compiled.sort((a, b) => (score(a) < score(b) ? -1 : score(a) > score(b) ? 1 : 0));

  return (method: string, rawPath: string): RouteMatch | undefined => {
    const parts = rawPath.split('?')[0].split('/').filter(Boolean);
    const m = method.toUpperCase();
    for (const c of compiled) {
      if (c.method !== m || c.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length && ok; i++) {
        const s = c.segments[i];
        if (s.startsWith('{')) {
          try {
            params[s.slice(1, -1)] = decodeURIComponent(parts[i]);
          } catch {
            ok = false;
          }
        } else ok = s === parts[i];
      }
      if (ok) return { routeKey: c.routeKey, rule: c.rule, params };
    }
    return undefined;
  };
}
