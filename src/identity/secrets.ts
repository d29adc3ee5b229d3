/**
 * Secrets at rest. A password is stored only as a scrypt hash (node:crypto, per-user salt, the
 * parameters kept with the hash so they can be raised later); an MFA secret only encrypted with
 * AES-256-GCM under the data key (GATEHOUSE_DATA_KEY, 32 bytes base64), bound to its user id.
 * Neither ever leaves the identity service: views and audit records omit them.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { GatehouseError } from '../errors.ts';

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

/** OWASP's scrypt recommendation (N=2^17, r=8, p=1: 128 MiB, a few hundred ms). */
export const DEFAULT_SCRYPT: ScryptParams = { N: 2 ** 17, r: 8, p: 1 };
const KEY_LEN = 64;
const SALT_LEN = 16;

function scrypt(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const opts: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r + 1024 * 1024 };
  return new Promise((resolve, reject) => scryptCb(password.normalize('NFKC'), salt, KEY_LEN, opts, (err, key) => (err ? reject(err) : resolve(key))));
}

/** `scrypt$N=…,r=…,p=…$<salt>$<hash>` (base64url). */
export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT): Promise<string> {
  const salt = randomBytes(SALT_LEN);
  const key = await scrypt(password, salt, params);
  return `scrypt$N=${params.N},r=${params.r},p=${params.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

function parseHash(stored: string): { params: ScryptParams; salt: Buffer; key: Buffer } | undefined {
  const m = /^scrypt\$N=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/.exec(stored);
  if (!m) return undefined;
  return { params: { N: Number(m[1]), r: Number(m[2]), p: Number(m[3]) }, salt: Buffer.from(m[4], 'base64url'), key: Buffer.from(m[5], 'base64url') };
}

/** Constant-time check of a password against a stored hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const key = await scrypt(password, parsed.salt, parsed.params);
  return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}

/** True when the stored hash uses weaker parameters than `params` (rehash on next login). */
export function needsRehash(stored: string, params: ScryptParams = DEFAULT_SCRYPT): boolean {
  const parsed = parseHash(stored);
  return !parsed || parsed.params.N < params.N || parsed.params.r < params.r || parsed.params.p < params.p;
}

// ---- data-key encryption ------------------------------------------------------------------------

export interface DataKey {
  key: Buffer;
  /** Short fingerprint stored with each ciphertext, so a wrong key is reported as such. */
  kid: string;
}

const DEV_KEY_SEED = 'gatehouse-development-data-key-not-for-production';

/**
 * The data key from GATEHOUSE_DATA_KEY (32 bytes, base64). Without it: refused in production;
 * elsewhere a fixed development key is derived and `warn` is called once.
 */
export function dataKeyFromEnv(env: NodeJS.ProcessEnv = process.env, warn: (msg: string) => void = (m) => process.emitWarning(m)): DataKey {
  const given = env.GATEHOUSE_DATA_KEY;
  if (given) {
    const key = Buffer.from(given, 'base64');
    if (key.length !== 32) throw new GatehouseError('CONFIG', 'GATEHOUSE_DATA_KEY must be 32 bytes, base64-encoded (e.g. `openssl rand -base64 32`)');
    return withKid(key);
  }
  if (env.NODE_ENV === 'production') throw new GatehouseError('CONFIG', 'GATEHOUSE_DATA_KEY is required in production (32 bytes, base64): it encrypts MFA secrets');
  warn('GATEHOUSE_DATA_KEY is not set: MFA secrets are encrypted with a fixed development key. Set it before storing real secrets.');
  return withKid(createHash('sha256').update(DEV_KEY_SEED).digest());
}

export const withKid = (key: Buffer): DataKey => ({ key, kid: createHash('sha256').update(key).digest('hex').slice(0, 8) });

/** `v1.<kid>.<iv>.<tag>.<ciphertext>`; `aad` (the user id) binds the ciphertext to its owner. */
export function encryptSecret(plain: string, dk: DataKey, aad: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', dk.key, iv);
  c.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return ['v1', dk.kid, iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

export function decryptSecret(blob: string, dk: DataKey, aad: string): string {
  const [v, kid, iv, tag, ct] = blob.split('.');
  if (v !== 'v1' || !ct) throw new GatehouseError('INTERNAL', 'An encrypted secret is malformed');
  if (kid !== dk.kid) throw new GatehouseError('CONFIG', `A secret was encrypted with another data key (${kid}); GATEHOUSE_DATA_KEY changed`);
  const d = createDecipheriv('aes-256-gcm', dk.key, Buffer.from(iv, 'base64url'));
  d.setAAD(Buffer.from(aad, 'utf8'));
  d.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
}
