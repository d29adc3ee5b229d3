/**
 * Request and response shapes of the identity domain. Secrets (password, MFA secret) appear only
 * in write-only inputs; no response schema has a field that could carry them.
 */
import { z } from '@hono/zod-openapi';
import { Id, Name, ScopeRefSchema, Timestamp } from '../tenancy/schema.ts';

/** Trimmed and lower-cased before it is checked (principle 4). */
export const Email = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .regex(z.regexes.email, 'Invalid e-mail address')
  .openapi({ example: 'ada@example.com', description: 'Trimmed and lower-cased' });
/** E.164 after removing spaces, dots, dashes and parentheses. */
export const Phone = z
  .string()
  .overwrite((s) => s.replace(/[\s().-]/g, ''))
  .regex(/^\+[1-9]\d{1,14}$/, 'Expected an E.164 phone number, e.g. +14155550123')
  .openapi({ example: '+14155550123' });
/** Case-insensitive: stored lower-cased. */
export const Username = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9][a-z0-9._-]{2,63}$/, '3-64 letters, digits, ".", "_" or "-", starting with a letter or digit')
  .openapi({ example: 'ada.l' });
export const IsoDate = z.iso.date().openapi({ example: '2026-12-31' });

export const USER_STATUSES = ['active', 'inactive', 'disabled'] as const;
export const UserStatus = z.enum(USER_STATUSES);
export const USER_TYPES = ['internal', 'client_admin', 'external_customer', 'external_tenant', 'member', 'lead'] as const;
export const UserType = z.enum(USER_TYPES);
export const Provider = z.enum(['password', 'google', 'github', 'microsoft', 'saml', 'oidc']);
export const MfaType = z.enum(['totp', 'sms', 'email', 'webauthn']);

const Text = (max: number) => z.string().trim().max(max);
const profile = {
  firstName: Text(100).optional(),
  lastName: Text(100).optional(),
  displayName: Text(200).optional(),
  title: Text(200).optional(),
  department: Text(200).optional(),
};

export const UserSchema = z
  .object({
    id: Id,
    tenantId: Id.openapi({ description: 'Home tenant' }),
    email: z.string(),
    phone: z.string().optional(),
    username: z.string().optional(),
    status: UserStatus,
    endDate: z.string().optional().openapi({ description: 'ISO date after which the user no longer has access' }),
    firstName: z.string().optional(),
    lastName: z.string().optional(),
    displayName: z.string(),
    title: z.string().optional(),
    department: z.string().optional(),
    userType: UserType,
    provider: Provider,
    invitedBy: z.string().optional(),
    invitedAt: Timestamp.optional(),
    mfaEnabled: z.boolean(),
    mfaType: MfaType.optional(),
    hasPassword: z.boolean(),
    passwordChangedAt: Timestamp.optional(),
    lastLoginAt: Timestamp.optional(),
    version: z.number().int(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi('User');
export type UserView = z.infer<typeof UserSchema>;

export const Password = z.string().min(8, 'At least 8 characters').max(256);

export const CreateUserInput = z
  .strictObject({
    email: Email,
    phone: Phone.optional(),
    username: Username.optional(),
    ...profile,
    userType: UserType.default('internal'),
    status: UserStatus.default('active'),
    endDate: IsoDate.optional(),
    provider: Provider.default('password').openapi({ description: 'How the user signs in (stored on the e-mail identity)' }),
    invitedBy: Id.optional(),
    password: Password.optional().openapi({ description: 'Write-only; stored as a scrypt hash' }),
    mfaType: MfaType.optional(),
    mfaSecret: z.string().min(8).max(512).optional().openapi({ description: 'Write-only; stored encrypted (AES-256-GCM)' }),
  })
  .openapi('CreateUser');
export type CreateUserInput = z.input<typeof CreateUserInput>;

export const UpdateUserInput = z
  .strictObject({
    email: Email.optional(),
    phone: Phone.nullable().optional().openapi({ description: 'null removes it' }),
    username: Username.nullable().optional().openapi({ description: 'null removes it' }),
    firstName: Text(100).nullable().optional(),
    lastName: Text(100).nullable().optional(),
    displayName: Text(200).nullable().optional(),
    title: Text(200).nullable().optional(),
    department: Text(200).nullable().optional(),
    userType: UserType.optional(),
    status: UserStatus.optional(),
    endDate: IsoDate.nullable().optional().openapi({ description: 'null makes access open-ended' }),
    provider: Provider.optional(),
    lastLoginAt: z.iso.datetime({ offset: true }).optional(),
  })
  .openapi('UpdateUser');
export type UpdateUserInput = z.input<typeof UpdateUserInput>;

export const SetPasswordInput = z.strictObject({ password: Password }).openapi('SetPassword');
export const SetMfaInput = z.strictObject({ type: MfaType, secret: z.string().min(8).max(512).optional() }).openapi('SetMfa');

// ---- memberships and tenant grants --------------------------------------------------------------

export const MembershipSchema = z
  .object({
    tenantId: Id,
    userId: Id,
    scope: ScopeRefSchema,
    scopeName: z.string().optional(),
    scopeCode: z.string().optional(),
    userDisplayName: z.string().optional(),
    userType: z.string().optional(),
    userEmail: z.string().optional(),
    joinedAt: Timestamp,
    tenantGrantId: z.string().optional().openapi({ description: 'For a membership of the tenant itself (a tenant grant)' }),
    roleIds: z.array(z.string()).optional(),
    version: z.number().int(),
  })
  .openapi('Membership');
export type MembershipView = z.infer<typeof MembershipSchema>;

export const GrantSchema = z
  .object({
    id: Id.openapi({ description: 'The tenant grant id' }),
    tenantId: Id,
    tenantName: z.string().optional(),
    userId: Id,
    userDisplayName: z.string().optional(),
    userEmail: z.string().optional(),
    roleIds: z.array(z.string()),
    joinedAt: Timestamp,
    version: z.number().int(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi('TenantGrant');
export type GrantView = z.infer<typeof GrantSchema>;
export const GrantInput = z
  .strictObject({
    roleIds: z.array(z.string().min(1).max(64)).max(50).default([]),
    // Any string (not the e-mail format): a malformed e-mail is just a wrong one, so it gets the same 404.
    email: z
      .string()
      .trim()
      .toLowerCase()
      .max(254)
      .optional()
      .openapi({
        example: 'ada@example.com',
        description:
          'The user\'s e-mail, as proof that the caller knows whom it adds (compared trimmed and case-insensitively). ' +
          'Required to add a user whose home tenant is another one; optional for a user of this tenant or one already granted here, ' +
          'but checked whenever it is given. A missing or wrong e-mail and an unknown user id all answer the same 404 naming `userId`, and nothing is written.',
      }),
  })
  .openapi('GrantInput');
export type GrantInput = z.input<typeof GrantInput>;

export const UserWithMembershipsSchema = z.object({ user: UserSchema, memberships: z.array(MembershipSchema), cursor: z.string().nullable() }).openapi('UserWithMemberships');
export { Name };
