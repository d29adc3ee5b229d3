/** Secrets at rest: the KDF and the data-key cipher (no table needed). */
import { describe, expect, it } from 'vitest';
import { dataKeyFromEnv, decryptSecret, DEFAULT_SCRYPT, encryptSecret, hashPassword, needsRehash, verifyPassword, withKid } from './secrets.ts';

describe('secrets', () => {
  it('KDF and cipher: current parameters by default, rehash detection, tamper and wrong-key detection', async () => {
    expect(DEFAULT_SCRYPT).toEqual({ N: 2 ** 17, r: 8, p: 1 });
    const strong = await hashPassword('pw-default-params');
    expect(strong).toMatch(/^scrypt\$N=131072,r=8,p=1\$/);
    expect(needsRehash(strong)).toBe(false);
    const weak = await hashPassword('pw', { N: 1024, r: 8, p: 1 });
    expect(await verifyPassword('pw', weak)).toBe(true);
    expect(await verifyPassword('pW', weak)).toBe(false);
    expect(needsRehash(await hashPassword('x', { N: 1024, r: 8, p: 1 }))).toBe(true);
    expect(await verifyPassword('x', 'garbage')).toBe(false);

    const dk = withKid(Buffer.alloc(32, 7));
    const blob = encryptSecret('s3cret', dk, 'user-1');
    expect(decryptSecret(blob, dk, 'user-1')).toBe('s3cret');
    expect(() => decryptSecret(blob, dk, 'user-2')).toThrow();
    const parts = blob.split('.');
    parts[4] = Buffer.from('tampered').toString('base64url');
    expect(() => decryptSecret(parts.join('.'), dk, 'user-1')).toThrow();
    expect(() => decryptSecret(blob, withKid(Buffer.alloc(32, 8)), 'user-1')).toThrow(/another data key/);
  });

  it('GATEHOUSE_DATA_KEY: 32 bytes base64; required in production; a warned fallback in development', () => {
    const key = Buffer.alloc(32, 1).toString('base64');
    expect(dataKeyFromEnv({ GATEHOUSE_DATA_KEY: key }).key).toEqual(Buffer.alloc(32, 1));
    expect(() => dataKeyFromEnv({ GATEHOUSE_DATA_KEY: Buffer.alloc(16).toString('base64') })).toThrow(/32 bytes/);
    expect(() => dataKeyFromEnv({ NODE_ENV: 'production' })).toThrow(/required in production/);
    const warnings: string[] = [];
    const dev = dataKeyFromEnv({ NODE_ENV: 'development' }, (m) => warnings.push(m));
    expect(dev.key).toHaveLength(32);
    expect(warnings[0]).toMatch(/GATEHOUSE_DATA_KEY is not set/);
  });
});
