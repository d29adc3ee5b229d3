/**
 * Users: global identities with a home tenant. E-mail (required), phone and username are unique
 * through guard items written in the same transaction as the user; a lost race is a 409 naming
 * the field. Changing one moves its guard atomically. Secrets are stored only hashed (password)
 * or encrypted (MFA secret) and never leave this module.
 */
import { ulid } from 'ulid';
import { at } from '../tenancy/clock.ts';
import { stamps } from '../access/stamps.ts';
import { auditPut } from '../audit/record.ts';
import type { RequestContext } from '../context.ts';
import { conflict, GatehouseError, isGatehouseError, notFound, versionConflict } from '../errors.ts';
import { keys } from '../store/keys.ts';
import type { Key } from '../store/keys.ts';
import { tx, type Item, type Page, type Store, type TxAction } from '../store/store.ts';
import type { Hierarchy, UserStatus } from '../tenancy/model.ts';
import { propagate } from '../tenancy/propagate.ts';
import type { PageQuery } from '../tenancy/repository.ts';
import { parse } from '../tenancy/validate.ts';
import { displayNameOf, IdentityRepository, membershipView, userView, type StoredUser } from './repository.ts';
import { CreateUserInput, Email, SetMfaInput, SetPasswordInput, UpdateUserInput, type MembershipView, type UserView } from './schema.ts';
import { encryptSecret, decryptSecret, hashPassword, verifyPassword, DEFAULT_SCRYPT, type DataKey, type ScryptParams } from './secrets.ts';

export interface UserServiceOptions {
  dataKey: DataKey;
  scrypt?: ScryptParams;
}

type Unique = 'email' | 'phone' | 'username';
const UNIQUE: Unique[] = ['email', 'phone', 'username'];
const label: Record<Unique, string> = { email: 'e-mail address', phone: 'phone number', username: 'username' };

const mapPage = <A, B>(p: Page<A>, f: (a: A) => B): Page<B> => ({ items: p.items.map(f), cursor: p.cursor });

export class UserService {
  private readonly scrypt: ScryptParams;
  constructor(
    private readonly repo: IdentityRepository,
    private readonly h: Hierarchy,
    private readonly o: UserServiceOptions,
  ) {
    this.scrypt = o.scrypt ?? DEFAULT_SCRYPT;
  }

  private get store(): Store {
    return this.repo.store;
  }

  private audit(ctx: RequestContext, u: StoredUser, action: string, before?: StoredUser, after?: StoredUser): TxAction {
    return auditPut(
      ctx,
      { T: this.h.T, tenantId: u.tenantId, action, entityType: 'user', entityId: u.id, before: before && userView(before), after: after && userView(after) },
      this.store.now(),
    );
  }

  private guardKey(field: Unique, value: string): Key {
    return field === 'email' ? keys.email(value) : field === 'phone' ? keys.phone(value) : keys.username(value);
  }

  private guardItem(field: Unique, u: StoredUser): Item {
    return field === 'email' ? this.repo.emailGuard(u) : field === 'phone' ? this.repo.phoneGuard(u) : this.repo.usernameGuard(u);
  }

  private taken(field: Unique, value: string) {
    return conflict(field, `This ${label[field]} is already in use`, { value: field === 'email' ? undefined : value });
  }

  /**
   * A transaction that lost every retry to concurrent writers on the same guard (RETRYABLE) is
   * classified by reading the guards: one now held by another user means this write lost → 409.
   */
  private async classify(err: unknown, u: StoredUser, fields: Unique[]): Promise<never> {
    if (isGatehouseError(err, 'RETRYABLE')) {
      const present = fields.filter((f) => u[f] !== undefined);
      const guards = await this.store.batchGet<Item>(present.map((f) => this.guardKey(f, u[f] as string)));
      for (const f of present) {
        const g = guards.find((x) => x.PK === this.guardKey(f, u[f] as string).PK);
        if (g && g.userId !== u.id) throw this.taken(f, u[f] as string);
      }
    }
    throw err;
  }

  /**
   * Creates a user in a home tenant. Reads the tenant (GetItem), then ONE transaction: the user,
   * its e-mail / phone / username guards (attribute_not_exists), the audit record.
   */
  async create(ctx: RequestContext, tenantId: string, input: CreateUserInput): Promise<UserView> {
    const w = at(this.store, this.store.now());
    const body = parse(CreateUserInput, input);
    const id = ulid();
    const [tenant, passwordHash] = await Promise.all([
      this.store.get(keys.tenant(this.h.T, tenantId)),
      body.password !== undefined ? hashPassword(body.password, this.scrypt) : undefined,
    ]);
    if (!tenant) throw notFound(this.h.tenantKind, tenantId);
    const now = w.now().toISOString();
    const u: StoredUser = {
      id,
      tenantId,
      email: body.email,
      ...(body.phone ? { phone: body.phone } : {}),
      ...(body.username ? { username: body.username } : {}),
      status: body.status,
      ...(body.endDate ? { endDate: body.endDate } : {}),
      ...(body.firstName ? { firstName: body.firstName } : {}),
      ...(body.lastName ? { lastName: body.lastName } : {}),
      ...(body.displayName ? { displayName: body.displayName } : {}),
      ...(body.title ? { title: body.title } : {}),
      ...(body.department ? { department: body.department } : {}),
      userType: body.userType,
      provider: body.provider,
      ...(body.invitedBy ? { invitedBy: body.invitedBy, invitedAt: now } : {}),
      mfaEnabled: body.mfaSecret !== undefined,
      ...(body.mfaSecret !== undefined ? { mfaType: body.mfaType ?? 'totp', mfaSecret: encryptSecret(body.mfaSecret, this.o.dataKey, id) } : {}),
      ...(passwordHash ? { passwordHash, passwordChangedAt: now } : {}),
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    const actions: TxAction[] = [tx.put(this.repo.userItem(u), { ifNotExists: true })];
    for (const f of UNIQUE) {
      if (u[f] !== undefined) actions.push(tx.put(this.guardItem(f, u), { ifNotExists: true, onConditionFailed: () => this.taken(f, u[f] as string) }));
    }
    actions.push(this.audit(ctx, u, 'user.create', undefined, u));
    try {
      await w.transactWrite(actions);
    } catch (e) {
      await this.classify(e, u, UNIQUE);
    }
    return userView(u);
  }

  /** The stored user (GetItem); for other modules (auth) that need more than the view. */
  record(id: string): Promise<StoredUser | undefined> {
    return this.repo.getUser(id);
  }

  /** GetItem `USER#id` / METADATA. */
  async get(id: string): Promise<UserView> {
    const u = await this.repo.getUser(id);
    if (!u) throw notFound('user', id);
    return userView(u);
  }

  async find(id: string): Promise<UserView | undefined> {
    const u = await this.repo.getUser(id);
    return u ? userView(u) : undefined;
  }

  /**
   * The user if it belongs to `tenantId`: its home tenant, or a tenant it holds a grant in.
   * One GetItem; a second (the grant) only for a user from another home tenant.
   */
  async findInTenant(tenantId: string, id: string): Promise<UserView | undefined> {
    const u = await this.repo.getUser(id);
    if (!u) return undefined;
    if (u.tenantId === tenantId) return userView(u);
    const grant = await this.store.get(keys.membershipOfScope(this.h.T, tenantId, id));
    return grant ? userView(u) : undefined;
  }

  /** E-mail → user: GetItem on the e-mail guard, then GetItem on the user. Strongly consistent, no GSI. */
  async getByEmail(email: string): Promise<UserView | undefined> {
    const normalized = parse(Email, email, 'email');
    const g = await this.repo.getEmailIdentity(normalized);
    if (!g) return undefined;
    return this.find(g.userId);
  }

  /** Users whose home tenant is `tenantId`: GSI1 `<T>#tid` begins_with `USER#`. */
  async byTenant(tenantId: string, p: PageQuery & { status?: UserStatus } = {}): Promise<Page<UserView>> {
    return mapPage(await this.repo.byTenant(tenantId, p), userView);
  }

  /** Users by status, by end date (platform-wide): one wave over the GSI3 shards, merged. */
  async byStatus(status: UserStatus, p: PageQuery & { endBefore?: string } = {}): Promise<Page<UserView>> {
    return mapPage(await this.repo.byStatus(status, p), userView);
  }

  /** 000 "user with workstream assignments": ONE Query of the user's partition. */
  async withMemberships(userId: string, p: PageQuery & { kind?: string } = {}): Promise<{ user: UserView; memberships: MembershipView[]; cursor: string | null }> {
    if (p.kind !== undefined && !this.h.kinds[p.kind] && p.kind !== this.h.tenantKind) throw new GatehouseError('VALIDATION', `kind: unknown kind "${p.kind}"`, { errors: [{ field: 'kind', message: 'Unknown kind' }] });
    const page = await this.repo.userWithMemberships(userId, p.kind, p);
    const user = page.items.find((i) => i.Type === 'User');
    if (!user && !p.cursor) throw notFound('user', userId);
    return {
      user: user ? userView(user) : (undefined as never),
      memberships: page.items.filter((i) => i.Type === 'Membership').map(membershipView),
      cursor: page.cursor,
    };
  }

  /**
   * Updates a user (home tenant only) at `expectedVersion`. A changed e-mail / phone / username
   * moves its guard in the same transaction (old guard deleted if still ours, new one put if
   * free); a status or end-date change bumps the user's access stamp.
   */
  async update(ctx: RequestContext, tenantId: string, id: string, input: UpdateUserInput, expectedVersion?: number): Promise<UserView> {
    const w = at(this.store, this.store.now());
    const body = parse(UpdateUserInput, input);
    const cur = await this.repo.getUser(id);
    if (!cur || cur.tenantId !== tenantId) throw notFound('user', id);
    if (expectedVersion !== undefined && cur.version !== expectedVersion) throw versionConflict(`user ${id}`, expectedVersion);
    const next: StoredUser = { ...cur, version: cur.version + 1, updatedAt: w.now().toISOString() };
    const assign = <K extends keyof StoredUser>(k: K, v: StoredUser[K] | null | undefined) => {
      if (v === undefined) return;
      if (v === null) delete next[k];
      else next[k] = v;
    };
    assign('email', body.email);
    assign('phone', body.phone);
    assign('username', body.username);
    for (const k of ['firstName', 'lastName', 'displayName', 'title', 'department'] as const) assign(k, body[k] === '' ? null : body[k]);
    assign('userType', body.userType);
    assign('status', body.status);
    assign('endDate', body.endDate);
    assign('provider', body.provider);
    assign('lastLoginAt', body.lastLoginAt);

    const actions: TxAction[] = [tx.put(this.repo.userItem(next), { expectedVersion: cur.version, what: `user ${id}` })];
    const ours = { expression: '#uid = :uid', names: { '#uid': 'userId' }, values: { ':uid': id } };
    const moved: Unique[] = [];
    for (const f of UNIQUE) {
      if (next[f] === cur[f]) continue;
      moved.push(f);
      if (cur[f] !== undefined) actions.push(tx.delete(this.guardKey(f, cur[f] as string), { condition: ours }));
      if (next[f] !== undefined) actions.push(tx.put(this.guardItem(f, next), { ifNotExists: true, onConditionFailed: () => this.taken(f, next[f] as string) }));
    }
    // The provider lives on the e-mail item too.
    if (!moved.includes('email') && next.provider !== cur.provider) actions.push(tx.put(this.guardItem('email', next), { condition: ours }));
    if (next.status !== cur.status || next.endDate !== cur.endDate) actions.push(...stamps.bumpUser(id));
    actions.push(this.audit(ctx, next, 'user.update', cur, next));
    try {
      await w.transactWrite(actions);
    } catch (e) {
      await this.classify(e, next, moved);
    }
    if (displayNameOf(next) !== displayNameOf(cur) || next.userType !== cur.userType || next.email !== cur.email) await this.propagateDisplay(next);
    return userView(next);
  }

  /** The user's display fields are shown on the scope side of each of its memberships. */
  private async propagateDisplay(u: StoredUser) {
    const edges = await this.store.queryAll<Item>({
      pk: keys.userPartition(u.id).pk,
      filter: { expression: '#t = :m', names: { '#t': 'Type' }, values: { ':m': 'Membership' } },
    });
    const targets = edges.map((e) => keys.membershipOfScope(this.repo.K(String(e.scopeKind)), String(e.scopeId), u.id));
    await propagate(this.store, targets, { userDisplayName: displayNameOf(u), userType: u.userType, userEmail: u.email });
  }

  /**
   * Deletes a user (home tenant only) at `expectedVersion`, with its guards; refused (409) while it
   * still has memberships, grants, group memberships or role assignments. Bumps its access stamp.
   */
  async delete(ctx: RequestContext, tenantId: string, id: string, expectedVersion?: number): Promise<void> {
    const w = at(this.store, this.store.now());
    const [cur, blockers] = await Promise.all([this.repo.getUser(id), this.repo.userBlockers(id)]);
    if (!cur || cur.tenantId !== tenantId) throw notFound('user', id);
    if (expectedVersion !== undefined && cur.version !== expectedVersion) throw versionConflict(`user ${id}`, expectedVersion);
    if (blockers.length) throw conflict('memberships', 'This user still has memberships, grants, group memberships or role assignments; remove them (or disable the user) first', { blockedBy: blockers[0].Type });
    const ours = { expression: '#uid = :uid', names: { '#uid': 'userId' }, values: { ':uid': id } };
    await w.transactWrite([
      tx.delete(keys.user(id), { expectedVersion: cur.version, what: `user ${id}` }),
      ...UNIQUE.filter((f) => cur[f] !== undefined).map((f) => tx.delete(this.guardKey(f, cur[f] as string), { condition: ours })),
      ...stamps.bumpUser(id),
      this.audit(ctx, cur, 'user.delete', cur),
    ]);
  }

  /** Stores a new password hash (scrypt). The password itself is never stored or logged. */
  async setPassword(ctx: RequestContext, tenantId: string, id: string, input: { password: string }, expectedVersion?: number): Promise<UserView> {
    const w = at(this.store, this.store.now());
    const { password } = parse(SetPasswordInput, input);
    const [cur, passwordHash] = await Promise.all([this.repo.getUser(id), hashPassword(password, this.scrypt)]);
    if (!cur || cur.tenantId !== tenantId) throw notFound('user', id);
    const next: StoredUser = { ...cur, passwordHash, passwordChangedAt: w.now().toISOString(), version: cur.version + 1, updatedAt: w.now().toISOString() };
    await w.transactWrite([
      tx.put(this.repo.userItem(next), { expectedVersion: expectedVersion ?? cur.version, what: `user ${id}` }),
      this.audit(ctx, next, 'user.password.set'),
    ]);
    return userView(next);
  }

  /** Constant-time password check against the stored hash. */
  async verifyPassword(id: string, password: string): Promise<boolean> {
    const u = await this.repo.getUser(id);
    return !!u?.passwordHash && (await verifyPassword(password, u.passwordHash));
  }

  /** Enables MFA; a secret (TOTP seed) is stored only encrypted, bound to the user id. */
  async setMfa(ctx: RequestContext, tenantId: string, id: string, input: { type: string; secret?: string }, expectedVersion?: number): Promise<UserView> {
    const w = at(this.store, this.store.now());
    const body = parse(SetMfaInput, input);
    const cur = await this.repo.getUser(id);
    if (!cur || cur.tenantId !== tenantId) throw notFound('user', id);
    const next: StoredUser = { ...cur, mfaEnabled: true, mfaType: body.type, version: cur.version + 1, updatedAt: w.now().toISOString() };
    if (body.secret !== undefined) next.mfaSecret = encryptSecret(body.secret, this.o.dataKey, id);
    else delete next.mfaSecret;
    await w.transactWrite([
      tx.put(this.repo.userItem(next), { expectedVersion: expectedVersion ?? cur.version, what: `user ${id}` }),
      this.audit(ctx, next, 'user.mfa.enable', cur, next),
    ]);
    return userView(next);
  }

  async disableMfa(ctx: RequestContext, tenantId: string, id: string, expectedVersion?: number): Promise<UserView> {
    const w = at(this.store, this.store.now());
    const cur = await this.repo.getUser(id);
    if (!cur || cur.tenantId !== tenantId) throw notFound('user', id);
    const next: StoredUser = { ...cur, mfaEnabled: false, version: cur.version + 1, updatedAt: w.now().toISOString() };
    delete next.mfaSecret;
    delete next.mfaType;
    await w.transactWrite([
      tx.put(this.repo.userItem(next), { expectedVersion: expectedVersion ?? cur.version, what: `user ${id}` }),
      this.audit(ctx, next, 'user.mfa.disable', cur, next),
    ]);
    return userView(next);
  }

  /** The decrypted MFA secret, for the verifier only (never through the API). */
  async mfaSecret(id: string): Promise<string | undefined> {
    const u = await this.repo.getUser(id);
    return u?.mfaSecret ? decryptSecret(u.mfaSecret, this.o.dataKey, id) : undefined;
  }
}
