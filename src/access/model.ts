/**
 * Access records and the pure rules every part of the access module (and its tests) shares:
 * permission-key grammar, wildcard matching, role compilation (materialized inheritance).
 */
import type { ScopeRef } from '../tenancy/model.ts';

export type Effect = 'ALLOW' | 'DENY';

export interface Rule {
  key: string;
  effect: Effect;
}

/** A rule on a role's compiled list, with the role (itself or an ancestor) that defines it. */
export interface CompiledRule extends Rule {
  roleId: string;
}

interface Versioned {
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface PermissionRecord extends Versioned {
  key: string;
  module: string;
  action: string;
  resource?: string;
  isPage: boolean;
  description?: string;
  isDangerous: boolean;
}

export type RoleScope = 'global' | 'tenant';

export interface RoleRecord extends Versioned {
  id: string;
  scope: RoleScope;
  /** Absent for global roles. */
  tenantId?: string;
  name: string;
  description?: string;
  parentRoleId?: string;
  /** Parent first, root last. */
  ancestorIds: string[];
  /** The role's own rules. */
  permissions: Rule[];
  /** Own rules followed by every ancestor's: what a check evaluates (no per-permission reads). */
  effectivePermissions: CompiledRule[];
  isSystem?: boolean;
}

/** The name guard (`ROLE_SCOPE#<scope> / ROLE_NAME#<name>`): enough to list a scope's role tree. */
export interface RoleNameRecord {
  roleId: string;
  name: string;
  scope: RoleScope;
  tenantId?: string;
  parentRoleId?: string;
}

export interface GroupRecord extends Versioned {
  id: string;
  tenantId: string;
  name: string;
  description?: string;
  scope: ScopeRef;
}

/** `USER#<uid> / GROUP#<gid>` and `GROUP#<gid> / USER#<uid>`; the group's scope is denormalized. */
export interface GroupMemberRecord extends Versioned {
  groupId: string;
  userId: string;
  tenantId: string;
  scope: ScopeRef;
}

export interface GroupRoleRecord extends Versioned {
  groupId: string;
  roleId: string;
  tenantId: string;
}

/** Stored assignment. `startAt`/`endAt` are ISO; `expiresAt` is the TTL (epoch seconds). */
export interface AssignmentRecord extends Versioned {
  id: string;
  userId: string;
  tenantId: string;
  roleId: string;
  scope: ScopeRef;
  startAt?: string;
  endAt?: string;
  expiresAt?: number;
}

/** Tenant grant (003): the membership of the tenant node, written by the tenancy module. */
export interface TenantGrantRecord {
  userId: string;
  tenantId?: string;
  roleIds?: string[];
  tenantGrantId?: string;
}

export interface PolicyRecord extends Versioned {
  id: string;
  name: string;
  description?: string;
  attributes?: Record<string, unknown>;
}

// ---- permission keys -------------------------------------------------------------------------------

const SEG = '[A-Za-z0-9][A-Za-z0-9_.-]{0,63}';
const KEY_RE = new RegExp(`^${SEG}:${SEG}(?::${SEG})?$`);
const PATTERN_RE = new RegExp(`^(?:\\*|${SEG}:\\*|${SEG}:${SEG}:\\*)$`);

/** `module:action[:resource]`; pages are `page:<name>`. */
export const isPermissionKey = (s: string) => KEY_RE.test(s);
/** `*`, `module:*`, `module:action:*` — allowed in role rules only. */
export const isPermissionPattern = (s: string) => PATTERN_RE.test(s);
export const isRuleKey = (s: string) => isPermissionKey(s) || isPermissionPattern(s);
export const pageKey = (page: string) => `page:${page}`;

export function parsePermissionKey(key: string): { module: string; action: string; resource?: string; isPage: boolean } {
  const [module, action, resource] = key.split(':');
  return { module, action, ...(resource !== undefined ? { resource } : {}), isPage: module === 'page' };
}

/** Does a rule key (exact or wildcard) cover a concrete permission? `devices:*` covers `devices:a:b`. */
export function ruleMatches(ruleKey: string, permission: string): boolean {
  if (ruleKey === '*') return true;
  if (ruleKey.endsWith(':*')) return permission.startsWith(ruleKey.slice(0, -1));
  return ruleKey === permission;
}

/** Does a DENY pattern cover everything an ALLOW pattern grants? */
export function ruleCovers(deny: string, allow: string): boolean {
  if (deny === '*') return true;
  if (deny.endsWith(':*')) return allow.startsWith(deny.slice(0, -1));
  return deny === allow;
}

// ---- role compilation --------------------------------------------------------------------------------

export const MAX_ROLE_DEPTH = 8;
/** Own rules per role: keeps a role's create/update (items + stamps + audit) within one transaction. */
export const MAX_ROLE_PERMISSIONS = 80;

/** The compiled view of a role given its parent's compiled view (or none). */
export function compileRole(roleId: string, own: Rule[], parent?: Pick<RoleRecord, 'id' | 'ancestorIds' | 'effectivePermissions'>) {
  return {
    ancestorIds: parent ? [parent.id, ...parent.ancestorIds] : [],
    effectivePermissions: [...own.map((r) => ({ key: r.key, effect: r.effect, roleId })), ...(parent?.effectivePermissions ?? [])],
  };
}

// ---- scopes ------------------------------------------------------------------------------------------

export const sameScope = (a: ScopeRef, b: ScopeRef) => a.kind === b.kind && a.id === b.id;
export const scopeId = (s: ScopeRef) => `${s.kind}#${s.id}`;
