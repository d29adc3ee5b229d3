/**
 * Request and response shapes of the tenancy domain (tenants, scope nodes, child resources,
 * catalog). The same schemas validate HTTP bodies, service inputs and produce the OpenAPI document.
 * Attribute maps are validated against the hierarchy's per-kind schemas by the services.
 */
import { z } from '@hono/zod-openapi';

export const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;
export const Id = z.string().regex(ULID_RE, 'Expected a ULID').openapi({ example: '01J8Z0E2Z8D2A3J7A7Y2H9GQ9C' });
/** Ids in paths: any opaque token (an unknown id is simply not found). */
export const PathId = z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, 'Not a valid id');
export const Name = z.string().trim().min(1, 'Required').max(200);
export const Timestamp = z.string().openapi({ example: '2025-01-31T12:00:00.000Z' });
/** Free-form here; checked against the kind's declared attribute schema by the service. */
export const AttributesIn = z.record(z.string(), z.unknown()).openapi({ description: "Validated against the kind's attribute schema (hierarchy config); unknown attributes are refused" });
/** In a PATCH: a JSON merge patch (null removes an attribute). */
export const AttributesPatch = z.record(z.string(), z.unknown()).openapi({ description: 'Merge patch: keys set to null are removed; the result is validated against the schema' });

const stamps = { version: z.number().int(), createdAt: Timestamp, updatedAt: Timestamp };

// ---- tenants ------------------------------------------------------------------------------------

export const TenantStatus = z.enum(['active', 'suspended']);
export const TenantSchema = z
  .object({ id: Id, kind: z.string().openapi({ example: 'client' }), name: z.string(), status: TenantStatus, attributes: z.record(z.string(), z.unknown()), ...stamps })
  .openapi('Tenant');
export type TenantView = z.infer<typeof TenantSchema>;
export const CreateTenantInput = z.strictObject({ name: Name, attributes: AttributesIn.optional() }).openapi('CreateTenant');
export type CreateTenantInput = z.input<typeof CreateTenantInput>;
export const UpdateTenantInput = z.strictObject({ name: Name.optional(), attributes: AttributesPatch.optional() }).openapi('UpdateTenant');
export type UpdateTenantInput = z.input<typeof UpdateTenantInput>;

// ---- scope nodes --------------------------------------------------------------------------------

export const ScopeRefSchema = z.object({ kind: z.string(), id: z.string() }).openapi('ScopeRef');
export const ScopeSchema = z
  .object({
    id: Id,
    tenantId: Id,
    kind: z.string().openapi({ example: 'building' }),
    name: z.string(),
    parentKind: z.string(),
    parentId: z.string(),
    path: z.array(ScopeRefSchema).openapi({ description: 'Ancestors, root (the tenant) first, ending with the parent' }),
    attributes: z.record(z.string(), z.unknown()),
    code: z.string().optional().openapi({ description: "The kind's unique human code, normalized to upper case" }),
    ...stamps,
  })
  .openapi('Scope');
export type ScopeView = z.infer<typeof ScopeSchema>;
export const CreateScopeInput = z
  .strictObject({
    kind: z.string().min(1).max(32),
    parentId: z.string().min(1).max(64).optional().openapi({ description: 'Omit (or pass the tenant id) for a node directly under the tenant' }),
    name: Name,
    attributes: AttributesIn.optional(),
  })
  .openapi('CreateScope');
export type CreateScopeInput = z.input<typeof CreateScopeInput>;
export const UpdateScopeInput = z.strictObject({ name: Name.optional(), attributes: AttributesPatch.optional() }).openapi('UpdateScope');
export type UpdateScopeInput = z.input<typeof UpdateScopeInput>;

// ---- child resources (000) ----------------------------------------------------------------------

const ownerFields = { id: Id, tenantId: Id, owner: ScopeRefSchema, ...stamps };

export const AddressFields = {
  label: z.string().trim().max(100).optional(),
  line1: z.string().trim().min(1).max(200),
  line2: z.string().trim().max(200).optional(),
  city: z.string().trim().min(1).max(100),
  state: z.string().trim().max(100).optional(),
  postalCode: z.string().trim().max(20).optional(),
  country: z.string().regex(/^[A-Z]{2}$/, 'ISO 3166-1 alpha-2 country code (e.g. US)'),
  isPrimary: z.boolean().optional(),
};
export const AddressSchema = z.object({ ...ownerFields, ...AddressFields }).openapi('Address');
export const CreateAddressInput = z.strictObject(AddressFields).openapi('CreateAddress');
export const UpdateAddressInput = z.strictObject(AddressFields).partial().openapi('UpdateAddress');

export const TechUserFields = {
  name: Name,
  description: z.string().max(1000).optional(),
  clientId: z.string().trim().max(200).optional().openapi({ description: 'The machine identity at your identity provider, if any' }),
  status: z.enum(['active', 'disabled']).default('active'),
};
export const TechUserSchema = z.object({ ...ownerFields, ...TechUserFields }).openapi('TechUser');
export const CreateTechUserInput = z.strictObject(TechUserFields).openapi('CreateTechUser');
export const UpdateTechUserInput = z.strictObject({ ...TechUserFields, status: z.enum(['active', 'disabled']) }).partial().openapi('UpdateTechUser');

/** Any JSON value: validated like z.json(), documented as an unconstrained value. */
const JsonValue = z.unknown().refine((v) => z.json().safeParse(v).success, 'Must be a JSON value').openapi({ description: 'Any JSON value' });

export const ToolFields = {
  name: Name,
  type: z.string().trim().max(100).optional(),
  url: z.url({ protocol: /^https?$/ }).max(2048).optional(),
  description: z.string().max(1000).optional(),
  // z.json() validates each value, but it is recursive (z.lazy) and zod-to-openapi overflows the
  // stack on it: the OpenAPI document of a hierarchy with tools (platform) failed with a 500.
  config: z
    .record(z.string().max(128), JsonValue)
    .refine((m) => JSON.stringify(m).length <= 8192, 'At most 8192 bytes of JSON')
    .optional(),
};
export const ToolSchema = z.object({ ...ownerFields, ...ToolFields }).openapi('Tool');
export const CreateToolInput = z.strictObject(ToolFields).openapi('CreateTool');
export const UpdateToolInput = z.strictObject(ToolFields).partial().openapi('UpdateTool');

// ---- catalog (000) ------------------------------------------------------------------------------

export const CatalogItemFields = {
  name: Name,
  description: z.string().max(2000).optional(),
  sku: z.string().trim().max(100).optional(),
  status: z.enum(['active', 'retired']).default('active'),
};
export const ProductSchema = z.object({ id: Id, ...CatalogItemFields, ...stamps }).openapi('Product');
export const ServiceSchema = z.object({ id: Id, ...CatalogItemFields, ...stamps }).openapi('Service');
export const CreateCatalogItemInput = z.strictObject(CatalogItemFields).openapi('CreateCatalogItem');
export const UpdateCatalogItemInput = z.strictObject({ ...CatalogItemFields, status: z.enum(['active', 'retired']) }).partial().openapi('UpdateCatalogItem');
export type CatalogItemView = z.infer<typeof ProductSchema>;

export const CatalogAssignmentSchema = z
  .object({
    tenantId: Id,
    scope: ScopeRefSchema,
    itemType: z.enum(['product', 'service']),
    itemId: Id,
    itemName: z.string(),
    assignedAt: Timestamp,
    ...stamps,
  })
  .openapi('CatalogAssignment');
export type CatalogAssignmentView = z.infer<typeof CatalogAssignmentSchema>;
