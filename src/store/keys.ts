/**
 * Every key string Gatehouse writes or reads is built here (design brief §4, principle 7).
 * Nothing else in the code writes a key template. Kind prefixes are the upper-cased kind names of
 * the deployment's hierarchy (e.g. `CLIENT`, `PROJECT`), passed in by the caller.
 */

export interface Key {
  PK: string;
  SK: string;
}
export type IndexKeys = Partial<Record<`GSI${1 | 2 | 3 | 4 | 5}${'PK' | 'SK'}`, string>>;

export const METADATA = 'METADATA';
/** Scope prefix of user-level settings (001 scope_type `user`): `SCOPE#USER#<uid>`. */
export const USER_SCOPE = 'USER';
export const SEP = '#';

/** `project` → `PROJECT`. Kind names are validated by the hierarchy loader ([a-z][a-z0-9_]*). */
export const kindPrefix = (kind: string) => kind.toUpperCase();

/**
 * Fixed prefixes a hierarchy kind may not take: a kind named `user` would collide with `USER#`.
 * The hierarchy loader refuses these.
 */
export const RESERVED_PREFIXES = [
  'ENTITY', 'USER', 'EMAIL', 'PHONE', 'USERNAME', 'TENANT_NAME', 'ROLE', 'ROLE_SCOPE', 'ROLE_NAME', 'PERMISSION',
  'SYSTEM', 'GROUP', 'GLOBAL', 'POLICY', 'POLICY_NAME', 'PRODUCT', 'SERVICE', 'LICENSE', 'SCOPE', 'SUBSCRIPTION',
  'SETTING', 'MODULE', 'AUDIT', 'NOTIFICATION', 'NOTIFICATION_AUDIT', 'SESSION', 'TOKEN', 'TENANT_GRANT', 'METADATA',
  'ADDRESS', 'TOOL', 'TECH_USER', 'STAMP', 'TREE', 'APIKEY', 'IDEMPOTENCY', 'ASSIGNMENTS', 'OUTBOX', 'LOCATION_CODE',
  'NOTICE',
] as const;

/** Shard count for partitions that would otherwise take a platform's or a large tenant's writes. */
export const SHARDS = { userStatus: 8, audit: 16, licenseStatus: 4, notificationStatus: 4, stampRead: 8, roleHolders: 8, actorAudit: 8 } as const;

/** Stable shard of an id (FNV-1a), so an item always lands in the same shard. */
export function shardOf(id: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}
export const allShards = (n: number) => Array.from({ length: n }, (_, i) => i);

const k = (PK: string, SK: string): Key => ({ PK, SK });

export const keys = {
  // ---- tenancy -------------------------------------------------------------------------------
  tenant: (T: string, tenantId: string) => k(`${T}#${tenantId}`, METADATA),
  tenantIndex: (T: string, tenantId: string): IndexKeys => ({ GSI1PK: `ENTITY#${T}`, GSI1SK: `${T}#${tenantId}` }),
  tenantsOfKind: (T: string) => ({ index: 'GSI1' as const, pk: `ENTITY#${T}` }),
  tenantName: (name: string) => k(`TENANT_NAME#${name}`, METADATA),

  /** A scope node's canonical item: holds its ancestor path. */
  scopeNode: (KIND: string, id: string) => k(`${KIND}#${id}`, METADATA),
  scopeNodeIndex: (T: string, tenantId: string, KIND: string, id: string, createdAt: string, path: string): IndexKeys => ({
    GSI1PK: `${T}#${tenantId}`,
    GSI1SK: `${KIND}#${id}`,
    GSI4PK: `${T}#${tenantId}`,
    GSI4SK: `${KIND}#${createdAt}`,
    // Path-sorted tree index: descendants of a node are one Query with begins_with(path + '/').
    GSI5PK: `TREE#${T}#${tenantId}`,
    GSI5SK: path,
  }),
  /** The child edge under the parent serves "children of a node" listings. */
  childEdge: (PARENT: string, parentId: string, KIND: string, id: string) => k(`${PARENT}#${parentId}`, `${KIND}#${id}`),
  childrenOf: (PARENT: string, parentId: string, KIND?: string) => ({ pk: `${PARENT}#${parentId}`, skPrefix: KIND ? `${KIND}#` : undefined }),
  /** Materialized path segment of a node: `KIND#id`; a path is segments joined by '/'. */
  pathSegment: (KIND: string, id: string) => `${KIND}#${id}`,
  tree: (T: string, tenantId: string) => ({ index: 'GSI5' as const, pk: `TREE#${T}#${tenantId}` }),
  tenantEntities: (T: string, tenantId: string, KIND?: string) => ({ index: 'GSI1' as const, pk: `${T}#${tenantId}`, skPrefix: KIND ? `${KIND}#` : undefined }),
  recentInTenant: (T: string, tenantId: string, KIND?: string) => ({ index: 'GSI4' as const, pk: `${T}#${tenantId}`, skPrefix: KIND ? `${KIND}#` : undefined }),
  locationCode: (code: string) => k(`LOCATION_CODE#${code}`, METADATA),
  /** Unique human code of a scope kind (generalizes 002's LOCATION_CODE#). */
  scopeCode: (KIND: string, code: string) => k(`${KIND}_CODE#${code}`, METADATA),

  /** Child resources of an owner node (000). */
  address: (OWNER: string, ownerId: string, id: string) => k(`${OWNER}#${ownerId}`, `ADDRESS#${id}`),
  techUser: (OWNER: string, ownerId: string, id: string) => k(`${OWNER}#${ownerId}`, `TECH_USER#${id}`),
  tool: (OWNER: string, ownerId: string, id: string) => k(`${OWNER}#${ownerId}`, `TOOL#${id}`),

  /** Materialized path string of a node (GSI5SK): its path segments, tenant first, joined by '/'. */
  treePath: (segments: { KIND: string; id: string }[]): string => segments.map((s) => keys.pathSegment(s.KIND, s.id)).join('/'),
  /** begins_with bound for the descendants of a node whose tree path is `path`. */
  descendantsOf: (path: string) => `${path}/`,
  /** GSI4 sort-key bound: nodes of KIND created at or after `at`. */
  recentBound: (KIND: string, at: string) => `${KIND}#${at}`,
  /** Every item of a tenant's partition (000 "account with addresses, tech users, licenses, workstreams"). */
  tenantPartition: (T: string, tenantId: string, skPrefix?: string) => ({ pk: `${T}#${tenantId}`, skPrefix }),
  /** Every item of a scope node's partition (000 "enterprise with products and services"). */
  nodePartition: (KIND: string, id: string) => ({ pk: `${KIND}#${id}` }),
  /** A scope linked to another node (000: workstream → enterprise), GSI2 `<LINK>#<lid>` / `<KIND>#<id>`. */
  scopeLinkIndex: (LINK: string, linkId: string, KIND: string, id: string): IndexKeys => ({ GSI2PK: `${LINK}#${linkId}`, GSI2SK: `${KIND}#${id}` }),
  linkedScopes: (LINK: string, linkId: string, KIND: string) => ({ index: 'GSI2' as const, pk: `${LINK}#${linkId}`, skPrefix: `${KIND}#` }),
  /** Child resources of an owner, by type. */
  addressesOf: (OWNER: string, ownerId: string) => ({ pk: `${OWNER}#${ownerId}`, skPrefix: 'ADDRESS#' }),
  techUsersOf: (OWNER: string, ownerId: string) => ({ pk: `${OWNER}#${ownerId}`, skPrefix: 'TECH_USER#' }),
  toolsOf: (OWNER: string, ownerId: string) => ({ pk: `${OWNER}#${ownerId}`, skPrefix: 'TOOL#' }),

  // ---- catalog (000) ---------------------------------------------------------------------------
  product: (id: string) => k(`PRODUCT#${id}`, METADATA),
  productIndex: (id: string): IndexKeys => ({ GSI1PK: 'ENTITY#PRODUCT', GSI1SK: `PRODUCT#${id}` }),
  service: (id: string) => k(`SERVICE#${id}`, METADATA),
  serviceIndex: (id: string): IndexKeys => ({ GSI1PK: 'ENTITY#SERVICE', GSI1SK: `SERVICE#${id}` }),
  /** enterprise ↔ product/service assignment, under the owning node. */
  ownerProduct: (OWNER: string, ownerId: string, productId: string) => k(`${OWNER}#${ownerId}`, `PRODUCT#${productId}`),
  ownerService: (OWNER: string, ownerId: string, serviceId: string) => k(`${OWNER}#${ownerId}`, `SERVICE#${serviceId}`),

  servicesAll: () => ({ index: 'GSI1' as const, pk: 'ENTITY#SERVICE' }),
  /** Catalog items assigned to an owner node: `PRODUCT#` / `SERVICE#` under it. */
  ownerProducts: (OWNER: string, ownerId: string) => ({ pk: `${OWNER}#${ownerId}`, skPrefix: 'PRODUCT#' }),
  ownerServices: (OWNER: string, ownerId: string) => ({ pk: `${OWNER}#${ownerId}`, skPrefix: 'SERVICE#' }),
  /** Reverse index of an assignment: the scopes holding a product/service (GSI2 `PRODUCT#<pid>` / `<KIND>#<sid>`). */
  ownerProductIndex: (productId: string, OWNER: string, ownerId: string): IndexKeys => ({ GSI2PK: `PRODUCT#${productId}`, GSI2SK: `${OWNER}#${ownerId}` }),
  ownerServiceIndex: (serviceId: string, OWNER: string, ownerId: string): IndexKeys => ({ GSI2PK: `SERVICE#${serviceId}`, GSI2SK: `${OWNER}#${ownerId}` }),
  ownersOfProduct: (productId: string) => ({ index: 'GSI2' as const, pk: `PRODUCT#${productId}` }),
  ownersOfService: (serviceId: string) => ({ index: 'GSI2' as const, pk: `SERVICE#${serviceId}` }),

  // ---- identity ------------------------------------------------------------------------------
  user: (userId: string) => k(`USER#${userId}`, METADATA),
  userIndex: (T: string, tenantId: string, userId: string, status: string, endDate: string): IndexKeys => ({
    GSI1PK: `${T}#${tenantId}`,
    GSI1SK: `USER#${userId}`,
    GSI3PK: `USER#STATUS#${status}#${shardOf(userId, SHARDS.userStatus)}`,
    GSI3SK: `${endDate}#${userId}`,
  }),
  usersByStatusShard: (status: string, shard: number) => ({ index: 'GSI3' as const, pk: `USER#STATUS#${status}#${shard}` }),
  email: (email: string) => k(`EMAIL#${email}`, METADATA),
  phone: (phone: string) => k(`PHONE#${phone}`, METADATA),
  username: (username: string) => k(`USERNAME#${username}`, METADATA),
  /** Scope membership, both ways. For the tenant kind this is the tenant grant (003). */
  membershipOfUser: (userId: string, KIND: string, scopeId: string) => k(`USER#${userId}`, `${KIND}#${scopeId}`),
  membershipOfScope: (KIND: string, scopeId: string, userId: string) => k(`${KIND}#${scopeId}`, `USER#${userId}`),
  tenantGrantIndex: (grantId: string): IndexKeys => ({ GSI2PK: `TENANT_GRANT#${grantId}`, GSI2SK: `TENANT_GRANT#${grantId}` }),
  tenantGrantById: (grantId: string) => ({ index: 'GSI2' as const, pk: `TENANT_GRANT#${grantId}` }),
  /** A user's scope memberships of one kind (for the tenant kind: the user's tenant grants). */
  membershipsOfUser: (userId: string, KIND: string) => ({ pk: `USER#${userId}`, skPrefix: `${KIND}#` }),
  /** The members of a scope (for the tenant node: its tenant grants). */
  membersOfScope: (KIND: string, scopeId: string) => ({ pk: `${KIND}#${scopeId}`, skPrefix: 'USER#' }),
  session: (userId: string, startedAt: string, id: string) => k(`USER#${userId}`, `SESSION#${startedAt}#${id}`),
  token: (userId: string, id: string) => k(`USER#${userId}`, `TOKEN#${id}`),
  userPartition: (userId: string, skPrefix?: string) => ({ pk: `USER#${userId}`, skPrefix }),
  sessionsOfUser: (userId: string) => ({ pk: `USER#${userId}`, skPrefix: 'SESSION#' }),
  tokensOfUser: (userId: string) => ({ pk: `USER#${userId}`, skPrefix: 'TOKEN#' }),
  /** "Revoke all": sessions (and refresh tokens) issued before its instant are revoked. */
  sessionsRevoked: (userId: string) => k(`USER#${userId}`, 'SESSIONS_REVOKED'),
  productsAll: () => ({ index: 'GSI1' as const, pk: 'ENTITY#PRODUCT' }),

  // ---- access --------------------------------------------------------------------------------
  permission: (key: string) => k('SYSTEM', `PERMISSION#${key}`),
  permissions: () => ({ pk: 'SYSTEM', skPrefix: 'PERMISSION#' }),
  role: (roleId: string) => k(`ROLE#${roleId}`, METADATA),
  globalRoleIndex: (roleId: string): IndexKeys => ({ GSI1PK: 'ENTITY#ROLE', GSI1SK: `ROLE#${roleId}` }),
  roleOfTenant: (T: string, tenantId: string, roleId: string) => k(`${T}#${tenantId}`, `ROLE#${roleId}`),
  /** `scope` is `global` or a tenant id. */
  roleName: (scope: string, name: string) => k(`ROLE_SCOPE#${scope}`, `ROLE_NAME#${name}`),
  rolePermission: (roleId: string, permissionKey: string) => k(`ROLE#${roleId}`, `PERMISSION#${permissionKey}`),
  group: (groupId: string) => k(`GROUP#${groupId}`, METADATA),
  groupIndex: (T: string, tenantId: string, groupId: string): IndexKeys => ({ GSI1PK: `${T}#${tenantId}`, GSI1SK: `GROUP#${groupId}` }),
  groupMemberOfUser: (userId: string, groupId: string) => k(`USER#${userId}`, `GROUP#${groupId}`),
  groupMemberOfGroup: (groupId: string, userId: string) => k(`GROUP#${groupId}`, `USER#${userId}`),
  groupRole: (groupId: string, roleId: string) => k(`GROUP#${groupId}`, `ROLE#${roleId}`),
  assignment: (userId: string, KIND: string, scopeId: string, roleId: string) => k(`USER#${userId}`, `ROLE#${KIND}#${scopeId}#${roleId}`),
  assignmentIndex: (KIND: string, scopeId: string, userId: string, roleId: string): IndexKeys => ({
    GSI2PK: `${KIND}#${scopeId}#ASSIGNMENTS`,
    GSI2SK: `USER#${userId}#${roleId}`,
  }),
  assignmentsAtScope: (KIND: string, scopeId: string) => ({ index: 'GSI2' as const, pk: `${KIND}#${scopeId}#ASSIGNMENTS` }),
  policyName: (name: string) => k('GLOBAL', `POLICY_NAME#${name}`),
  policyIndex: (policyId: string): IndexKeys => ({ GSI2PK: `POLICY#${policyId}`, GSI2SK: `POLICY#${policyId}` }),
  policyById: (policyId: string) => ({ index: 'GSI2' as const, pk: `POLICY#${policyId}` }),
  /**
   * Access version stamps (cache validation). A user's stamp moves with its assignments, group
   * memberships and status; a tenant's with its roles, groups and status; the global stamp with
   * global roles. Tenant and global stamps are written to every shard and read from one, so reads
   * spread over partitions.
   */
  userStamp: (userId: string) => k(`USER#${userId}`, 'STAMP'),
  tenantStamp: (T: string, tenantId: string, shard: number) => k(`${T}#${tenantId}#STAMP#${shard}`, 'STAMP'),
  globalStamp: (shard: number) => k(`SYSTEM#STAMP#${shard}`, 'STAMP'),
  // Access listings (added by the access module).
  /** Roles of a scope (`global` or a tenant id) by name: the name guards, a strongly consistent listing. */
  roleNamesOf: (scope: string) => ({ pk: `ROLE_SCOPE#${scope}`, skPrefix: 'ROLE_NAME#' }),
  /** Roles of a tenant (004 "roles of a client"): the tenant's role edges. */
  rolesOfTenant: (T: string, tenantId: string) => ({ pk: `${T}#${tenantId}`, skPrefix: 'ROLE#' }),
  globalRoles: () => ({ index: 'GSI1' as const, pk: 'ENTITY#ROLE', skPrefix: 'ROLE#' }),
  /** A role's items: METADATA and its PERMISSION# rules (pages are `PERMISSION#page:<name>`). */
  rolePartition: (roleId: string, skPrefix?: string) => ({ pk: `ROLE#${roleId}`, skPrefix }),
  /**
   * Who holds a role (assignments, group → role edges), for "delete a role still assigned":
   * GSI1 `ROLE#<rid>#HOLDERS#<shard>`, sharded by holder so a popular global role is no hot key.
   */
  roleHolderIndex: (roleId: string, holderId: string, sk: string): IndexKeys => ({
    GSI1PK: `ROLE#${roleId}#HOLDERS#${shardOf(holderId, SHARDS.roleHolders)}`,
    GSI1SK: sk,
  }),
  roleHolders: (roleId: string, shard: number) => ({ index: 'GSI1' as const, pk: `ROLE#${roleId}#HOLDERS#${shard}` }),
  groupMembers: (groupId: string) => ({ pk: `GROUP#${groupId}`, skPrefix: 'USER#' }),
  groupRoles: (groupId: string) => ({ pk: `GROUP#${groupId}`, skPrefix: 'ROLE#' }),
  groupsOfUser: (userId: string) => ({ pk: `USER#${userId}`, skPrefix: 'GROUP#' }),
  /** A user's assignments, all or at one scope (004 "a user's roles (all, and at one scope)"). */
  assignmentsOfUser: (userId: string, KIND?: string, scopeId?: string) => ({
    pk: `USER#${userId}`,
    skPrefix: KIND && scopeId ? `ROLE#${KIND}#${scopeId}#` : 'ROLE#',
  }),
  policyNames: (prefix = '') => ({ pk: 'GLOBAL', skPrefix: `POLICY_NAME#${prefix}` }),

  // ---- entitlements --------------------------------------------------------------------------
  license: (T: string, tenantId: string, licenseId: string) => k(`${T}#${tenantId}`, `LICENSE#${licenseId}`),
  licenseIndex: (OWNER: string, ownerId: string, licenseId: string, status: string, endDate: string): IndexKeys => ({
    GSI2PK: `${OWNER}#${ownerId}`,
    GSI2SK: `LICENSE#${licenseId}`,
    GSI3PK: `LICENSE#STATUS#${status}#${shardOf(licenseId, SHARDS.licenseStatus)}`,
    GSI3SK: `${endDate}#${licenseId}`,
  }),
  licensesByStatusShard: (status: string, shard: number) => ({ index: 'GSI3' as const, pk: `LICENSE#STATUS#${status}#${shard}` }),
  licenseSeat: (licenseId: string, userId: string) => k(`LICENSE#${licenseId}`, `SEAT#${userId}`),
  subscription: (KIND: string, scopeId: string, moduleId: string) => k(`SCOPE#${KIND}#${scopeId}`, `SUBSCRIPTION#${moduleId}`),
  subscriptionIndex: (KIND: string, scopeId: string, moduleId: string): IndexKeys => ({ GSI5PK: `MODULE#${moduleId}`, GSI5SK: `SUBSCRIPTION#${KIND}#${scopeId}` }),
  subscriptionsOfModule: (moduleId: string) => ({ index: 'GSI5' as const, pk: `MODULE#${moduleId}` }),
  setting: (KIND: string, scopeId: string, key: string) => k(`SCOPE#${KIND}#${scopeId}`, `SETTING#${key}`),
  scopePartition: (KIND: string, scopeId: string, skPrefix?: string) => ({ pk: `SCOPE#${KIND}#${scopeId}`, skPrefix }),
  licensesOfTenant: (T: string, tenantId: string) => ({ pk: `${T}#${tenantId}`, skPrefix: 'LICENSE#' }),
  /** GSI2: licenses of a product (`PRODUCT`) or an enterprise (`ENTERPRISE`). */
  licensesOfOwner: (OWNER: string, ownerId: string) => ({ index: 'GSI2' as const, pk: `${OWNER}#${ownerId}`, skPrefix: 'LICENSE#' }),
  /** GSI3 sort-key bounds of licenses ending before `before` (exclusive): `<endDate>#<id>`. */
  licenseEndRange: (before: string): [string, string] => ['0', before],
  seatsOfLicense: (licenseId: string) => ({ pk: `LICENSE#${licenseId}`, skPrefix: 'SEAT#' }),
  subscriptionsOfScope: (KIND: string, scopeId: string) => ({ pk: `SCOPE#${KIND}#${scopeId}`, skPrefix: 'SUBSCRIPTION#' }),
  settingsOfScope: (KIND: string, scopeId: string) => ({ pk: `SCOPE#${KIND}#${scopeId}`, skPrefix: 'SETTING#' }),
  /** Idempotency guard of one notice: (license, threshold, recipient). */
  notice: (licenseId: string, threshold: string, recipient: string) => k(`NOTICE#${licenseId}`, `THRESHOLD#${threshold}#${recipient}`),

  // ---- audit ---------------------------------------------------------------------------------
  audit: (T: string, tenantId: string, shard: number, ts: string, id: string) => k(`${T}#${tenantId}#AUDIT#${shard}`, `AUDIT#${ts}#${id}`),
  auditIndex: (actorId: string | undefined, ts: string, id: string): IndexKeys =>
    actorId ? { GSI2PK: `USER#${actorId}#AUDIT`, GSI2SK: `${ts}#${id}` } : {},
  auditShard: (T: string, tenantId: string, shard: number) => ({ pk: `${T}#${tenantId}#AUDIT#${shard}` }),
  auditOfActor: (actorId: string) => ({ index: 'GSI2' as const, pk: `USER#${actorId}#AUDIT` }),
  /**
   * A machine actor (API key) may write at a whole tenant's rate: its activity index is sharded
   * (principle 9) — `USER#<id>#AUDIT#<shard>`, all shards read in one wave.
   */
  auditIndexSharded: (actorId: string, shard: number, ts: string, id: string): IndexKeys => ({ GSI2PK: `USER#${actorId}#AUDIT#${shard}`, GSI2SK: `${ts}#${id}` }),
  auditOfActorShard: (actorId: string, shard: number) => ({ index: 'GSI2' as const, pk: `USER#${actorId}#AUDIT#${shard}` }),
  /** Inclusive SK bounds of a tenant's audit between two ISO instants (or dates; `to` covers its whole day). */
  auditRange: (from?: string, to?: string): [string, string] => [`AUDIT#${from ?? ''}`, `AUDIT#${to ?? '9999'}~`],
  /** Inclusive bounds of `<ts>#<id>` index sort keys (actor audit, notifications, outbox). */
  timeRange: (from?: string, to?: string): [string, string] => [from || '0', `${to ?? '9999'}~`],
  notificationAudits: () => ({ index: 'GSI1' as const, pk: 'ENTITY#NOTIFICATION_AUDIT' }),
  notificationsOfTenant: (T: string, tenantId: string) => ({ index: 'GSI2' as const, pk: `${T}#${tenantId}#NOTIFICATIONS` }),
  notificationsByStatusShard: (status: string, shard: number) => ({ index: 'GSI3' as const, pk: `NOTIFICATION#STATUS#${status}#${shard}` }),
  /** Development mail outbox: one partition per tenant (`all` for platform mail), GSI1 lists every message. */
  outboxMessage: (tenantId: string, sentAt: string, id: string) => k(`OUTBOX#${tenantId}`, `${sentAt}#${id}`),
  outboxIndex: (sentAt: string, id: string): IndexKeys => ({ GSI1PK: 'ENTITY#OUTBOX', GSI1SK: `${sentAt}#${id}` }),
  outboxOfTenant: (tenantId: string) => ({ pk: `OUTBOX#${tenantId}` }),
  outboxAll: () => ({ index: 'GSI1' as const, pk: 'ENTITY#OUTBOX' }),
  notificationAudit: (id: string) => k(`NOTIFICATION_AUDIT#${id}`, METADATA),
  notificationAuditIndex: (T: string, tenantId: string, status: string, sentAt: string, id: string): IndexKeys => ({
    GSI1PK: 'ENTITY#NOTIFICATION_AUDIT',
    GSI1SK: `NOTIFICATION_AUDIT#${id}`,
    GSI2PK: `${T}#${tenantId}#NOTIFICATIONS`,
    GSI2SK: `${sentAt}#${id}`,
    GSI3PK: `NOTIFICATION#STATUS#${status}#${shardOf(id, SHARDS.notificationStatus)}`,
    GSI3SK: `${sentAt}#${id}`,
  }),

  // ---- API plumbing ----------------------------------------------------------------------------
  apiKey: (keyId: string) => k(`APIKEY#${keyId}`, METADATA),
  /** A tenant's API keys are listed through its tenant index (GSI1 `<T>#<tid>` / `APIKEY#<keyId>`). */
  apiKeyIndex: (T: string, tenantId: string, keyId: string): IndexKeys => ({ GSI1PK: `${T}#${tenantId}`, GSI1SK: `APIKEY#${keyId}` }),
  apiKeysOfTenant: (T: string, tenantId: string) => ({ index: 'GSI1' as const, pk: `${T}#${tenantId}`, skPrefix: 'APIKEY#' }),
  /** Last-used time of an API key, apart from the key item so touching it never moves the key's version (ETag). */
  apiKeyUsage: (keyId: string) => k(`APIKEY#${keyId}`, 'USAGE'),
  idempotency: (callerId: string, key: string) => k(`IDEMPOTENCY#${callerId}#${key}`, METADATA),
};

/** Opaque URL id for an item whose key is composite: resolves to its key without a GSI. */
export const opaqueId = {
  encode: (parts: string[]) => Buffer.from(parts.join('\u001f'), 'utf8').toString('base64url'),
  decode: (id: string, count: number): string[] | undefined => {
    const parts = Buffer.from(id, 'base64url').toString('utf8').split('\u001f');
    return parts.length === count && parts.every((p) => p.length > 0) ? parts : undefined;
  },
};
