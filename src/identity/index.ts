/** The identity domain: users, their unique identifiers and secrets, memberships, tenant grants. */
import type { Store } from '../store/store.ts';
import type { Hierarchy } from '../tenancy/model.ts';
import { MembershipService } from './memberships.ts';
import { IdentityRepository } from './repository.ts';
import { dataKeyFromEnv, type DataKey, type ScryptParams } from './secrets.ts';
import { UserService } from './service.ts';

export interface IdentityServices {
  repo: IdentityRepository;
  users: UserService;
  memberships: MembershipService;
}

export interface IdentityOptions {
  store: Store;
  hierarchy: Hierarchy;
  /** Encrypts MFA secrets; default from GATEHOUSE_DATA_KEY (dev fallback with a warning). */
  dataKey?: DataKey;
  /** Password KDF parameters; default scrypt N=2^17, r=8, p=1. */
  scrypt?: ScryptParams;
  /** Where the missing-data-key warning goes (default: process.emitWarning). */
  warn?: (message: string) => void;
}

export function createIdentity(o: IdentityOptions): IdentityServices {
  const repo = new IdentityRepository(o.store, o.hierarchy);
  const dataKey = o.dataKey ?? dataKeyFromEnv(process.env, o.warn);
  return {
    repo,
    users: new UserService(repo, o.hierarchy, { dataKey, scrypt: o.scrypt }),
    memberships: new MembershipService(repo, o.hierarchy),
  };
}

export { identityRoutes } from './routes.ts';
