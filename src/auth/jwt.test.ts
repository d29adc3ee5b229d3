import { createServer, type Server } from 'node:http';
import { generateKeyPairSync, createSecretKey, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, SignJWT, UnsecuredJWT, base64url } from 'jose';
import { createRoute, z } from '@hono/zod-openapi';
import { createApp } from '../http/app.ts';
import { authenticate } from '../http/auth.ts';
import { createLogger } from '../http/logger.ts';
import { GatehouseError } from '../errors.ts';
import { createDevIssuer, jwtAuthenticator, trustIssuer, verifyJwt } from './jwt.ts';
import { authConfigFromEnv } from './config.ts';

const ISS = 'https://id.example.com/';
const AUD = 'gatehouse';
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaPem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();

const now = () => Math.floor(Date.now() / 1000);
async function sign(o: { key?: KeyObject; alg?: string; iss?: string; aud?: string; sub?: string | null; exp?: number | null; nbf?: number; kid?: string } = {}) {
  const jwt = new SignJWT({ tenant_id: 'T1' }).setProtectedHeader({ alg: o.alg ?? 'RS256', ...(o.kid ? { kid: o.kid } : {}) }).setIssuer(o.iss ?? ISS).setAudience(o.aud ?? AUD).setIssuedAt();
  if (o.sub !== null) jwt.setSubject(o.sub ?? 'U1');
  if (o.exp !== null) jwt.setExpirationTime(o.exp ?? now() + 300);
  if (o.nbf !== undefined) jwt.setNotBefore(o.nbf);
  return jwt.sign(o.key ?? rsa.privateKey);
}

const trusted = [trustIssuer({ issuer: ISS, audience: AUD, publicKey: rsaPem, algorithms: ['RS256'] })];
async function rejected(token: string): Promise<GatehouseError> {
  const e = await verifyJwt(token, trusted).then(() => undefined, (x: unknown) => x);
  expect(e).toBeInstanceOf(GatehouseError);
  return e as GatehouseError;
}

describe('JWT verification', () => {
  it('accepts a valid RS256 token and maps sub to a user principal', async () => {
    const p = await verifyJwt(await sign(), trusted);
    expect(p).toEqual({ actor: { id: 'U1', type: 'user', tenantId: 'T1' }, platformAdmin: false, kind: 'jwt' });
  });

  it('refuses alg: none', async () => {
    const token = new UnsecuredJWT({ sub: 'U1' }).setIssuer(ISS).setAudience(AUD).setExpirationTime('5m').encode();
    const e = await rejected(token);
    expect(e.code).toBe('UNAUTHENTICATED');
    expect(e.message).toMatch(/algorithm/);
  });

  it('refuses HS256 signed with the public key (HS/RS confusion)', async () => {
    const secret = createSecretKey(Buffer.from(rsaPem));
    const e = await rejected(await sign({ key: secret as never, alg: 'HS256' }));
    expect(e.code).toBe('UNAUTHENTICATED');
    expect(e.message).toMatch(/algorithm/);
  });

  it('refuses an allowed-family algorithm outside the issuer allow-list (ES256 for an RS256 issuer)', async () => {
    const e = await rejected(await sign({ key: ec.privateKey, alg: 'ES256' }));
    expect(e.message).toMatch(/algorithm/);
  });

  it('refuses expired, not-yet-valid, wrong issuer, wrong audience, bad signature, missing exp/sub', async () => {
    expect((await rejected(await sign({ exp: now() - 120 }))).message).toMatch(/expired/);
    expect((await rejected(await sign({ nbf: now() + 600 }))).message).toMatch(/not valid yet/);
    expect((await rejected(await sign({ iss: 'https://evil.example.com/' }))).message).toMatch(/issuer/);
    expect((await rejected(await sign({ aud: 'someone-else' }))).message).toMatch(/audience/);
    expect((await rejected(await sign({ key: other.privateKey }))).message).toMatch(/signature/);
    expect((await rejected(await sign({ exp: null }))).message).toMatch(/exp/);
    expect((await rejected(await sign({ sub: null }))).message).toMatch(/sub/);
    // A tampered payload keeps the signature of another payload.
    const [h, , s] = (await sign()).split('.');
    const forged = `${h}.${base64url.encode(JSON.stringify({ sub: 'admin', iss: ISS, aud: AUD, exp: now() + 60 }))}.${s}`;
    expect((await rejected(forged)).message).toMatch(/signature/);
    expect((await rejected('a.b.c')).message).toMatch(/malformed/);
  });

  it('refuses a configuration that allows HS* or none', () => {
    expect(() => trustIssuer({ issuer: ISS, audience: AUD, publicKey: rsaPem, algorithms: ['HS256' as never] })).toThrow(/not allowed/);
    expect(() => trustIssuer({ issuer: ISS, audience: AUD, publicKey: rsaPem, algorithms: ['none' as never] })).toThrow(/not allowed/);
    expect(() => trustIssuer({ issuer: ISS, audience: AUD, publicKey: createSecretKey(Buffer.alloc(32)) })).toThrow();
  });

  it('reads the issuer from the environment; the dev issuer is refused in production', () => {
    const cfg = authConfigFromEnv({ GATEHOUSE_JWT_ISSUER: ISS, GATEHOUSE_JWT_AUDIENCE: 'a,b', GATEHOUSE_JWT_PUBLIC_KEY: rsaPem, GATEHOUSE_JWT_ALGORITHMS: 'RS256' });
    expect(cfg.jwt?.[0]).toMatchObject({ issuer: ISS, audience: ['a', 'b'], algorithms: ['RS256'] });
    expect(cfg.devIssuer).toBe(false);
    expect(() => authConfigFromEnv({ GATEHOUSE_DEV_ISSUER: 'true', NODE_ENV: 'production' })).toThrow(/production/);
    expect(() => authConfigFromEnv({ GATEHOUSE_JWT_ISSUER: ISS, GATEHOUSE_JWT_AUDIENCE: 'a' })).toThrow(/exactly one/);
  });
});

describe('JWKS URL', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    const jwk = { ...(await exportJWK(ec.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    server = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/jwks.json`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('verifies against the issuer keys and refuses unknown kids', async () => {
    const t = [trustIssuer({ issuer: ISS, audience: AUD, jwksUrl: url, algorithms: ['ES256'] })];
    expect((await verifyJwt(await sign({ key: ec.privateKey, alg: 'ES256', kid: 'k1' }), t)).actor.id).toBe('U1');
    const e = await verifyJwt(await sign({ key: other.privateKey, alg: 'RS256', kid: 'k9' }), t).catch((x: GatehouseError) => x);
    expect((e as GatehouseError).code).toBe('UNAUTHENTICATED');
  });

  it('an unreachable JWKS is 503 RETRYABLE, not 401', async () => {
    const t = [trustIssuer({ issuer: ISS, audience: AUD, jwksUrl: 'http://127.0.0.1:1/jwks.json', algorithms: ['ES256'] })];
    const e = await verifyJwt(await sign({ key: ec.privateKey, alg: 'ES256', kid: 'k1' }), t).catch((x: GatehouseError) => x);
    expect((e as GatehouseError).code).toBe('RETRYABLE');
  });
});

describe('over HTTP', () => {
  const lines: string[] = [];
  const logger = createLogger('info', { write: (s: string) => void lines.push(s) } as never);
  const app = createApp({
    version: 't',
    dynamoEndpoint: 'x',
    tableName: 't',
    logger,
    middleware: [authenticate([jwtAuthenticator([{ issuer: ISS, audience: AUD, publicKey: rsaPem }])])],
    routes: [
      (a) =>
        a.openapi(createRoute({ method: 'get', path: '/v1/whoami', responses: { 200: { description: 'me', content: { 'application/json': { schema: z.object({ id: z.string() }) } } } } }), (c) =>
          c.json({ id: c.get('principal')!.actor.id }, 200),
        ),
    ],
  });
  const get = (auth?: string) => app.request('/v1/whoami', { headers: auth ? { authorization: auth } : {} });

  it('401 problem+json with WWW-Authenticate for every rejection; the token is never logged', async () => {
    const bad = [await sign({ exp: now() - 100 }), await sign({ aud: 'x' }), await sign({ iss: 'y' }), await sign({ key: other.privateKey })];
    for (const token of bad) {
      const res = await get(`Bearer ${token}`);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(res.headers.get('content-type')).toMatch(/problem\+json/);
      expect(JSON.stringify(await res.json())).not.toContain(token);
    }
    expect((await get()).status).toBe(401);
    expect((await get('Basic dTpw')).status).toBe(401);
    const good = await sign();
    const ok = await get(`Bearer ${good}`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ id: 'U1' });
    expect(lines.join('\n')).not.toContain(good.split('.')[2]);
  });

  it('the development issuer signs tokens the authenticator accepts', async () => {
    const dev = await createDevIssuer();
    const { token } = await dev.issue({ sub: 'U7', ttlSeconds: 60 });
    const p = await jwtAuthenticator([dev.config])(token);
    expect(p?.actor.id).toBe('U7');
    expect((await dev.jwks()).keys[0]).toMatchObject({ kty: 'EC', alg: 'ES256' });
  });
});
