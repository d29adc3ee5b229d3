/**
 * Shapes shared across domains: the hierarchy a deployment declares, and the stored records of
 * tenants, scope nodes and users that the access engine reads. (Schemas and services live in the
 * tenancy and identity modules; this file is the contract between them and the access engine.)
 */
import type { ZodType } from 'zod';

export interface ScopeKindDef {
  /** Lower-case kind name, e.g. `building`. */
  name: string;
  /** Key prefix: the upper-cased name, e.g. `BUILDING`. */
  prefix: string;
  /** The parent kind's name (the tenant kind for top-level kinds). */
  parent: string;
  /** Validates a node's `attributes`. */
  attributes: ZodType<Record<string, unknown>>;
  /** Name of an attribute that is a unique human code within the deployment (002 location code). */
  uniqueCode?: string;
  /** Kinds this kind may be linked to (000: workstream linked to an enterprise). */
  links?: string[];
  /** Child resources nodes of this kind may own (000: workstream tools). */
  resources?: ResourceType[];
  /** Nodes of this kind hold product/service assignments (000: enterprise). */
  catalog?: boolean;
  /** Kinds whose declared parent is this kind (filled in by the loader). */
  children?: string[];
}

/** Child resources stored under their owner's partition (000). */
export type ResourceType = 'address' | 'tech_user' | 'tool';

export interface Hierarchy {
  /** e.g. `facilities`. */
  name: string;
  tenantKind: string;
  /** The tenant kind's key prefix, e.g. `CLIENT`. */
  T: string;
  tenantAttributes: ZodType<Record<string, unknown>>;
  /** Scope kinds by name (the tenant kind is not among them). */
  kinds: Record<string, ScopeKindDef>;
  /** Child resources a tenant may own (000: account addresses and technical users). */
  tenantResources?: ResourceType[];
  description?: string;
}

/** A reference to a scope: the tenant itself is `{ kind: <tenant kind>, id: <tenantId> }`. */
export interface ScopeRef {
  kind: string;
  id: string;
}

export type TenantStatus = 'active' | 'suspended';
export type UserStatus = 'active' | 'inactive' | 'disabled';

/** Stored tenant (keys.tenant). */
export interface TenantRecord {
  id: string;
  name: string;
  status: TenantStatus;
  attributes?: Record<string, unknown>;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * Stored scope node (keys.scopeNode). `path` lists the ancestors root first, starting with the
 * tenant and ending with the parent, so one strongly consistent GetItem yields every ancestor id.
 */
export interface ScopeNodeRecord {
  id: string;
  tenantId: string;
  kind: string;
  name: string;
  parentKind: string;
  parentId: string;
  path: ScopeRef[];
  attributes: Record<string, unknown>;
  /** The kind's unique human code, normalized (upper-case), when the kind declares one. */
  code?: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** Stored user (keys.user). `tenantId` is the home tenant; access elsewhere comes from grants. */
export interface UserRecord {
  id: string;
  tenantId: string;
  email: string;
  phone?: string;
  username?: string;
  status: UserStatus;
  /** ISO date after which the user no longer has access (000 end date); absent = open-ended. */
  endDate?: string;
  firstName?: string;
  lastName?: string;
  displayName?: string;
  userType?: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}
