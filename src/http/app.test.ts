import { createRoute, z } from '@hono/zod-openapi';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { conflict, GatehouseError } from '../errors.ts';
import { createApp } from './app.ts';
import { bearer, errorResponses, json201, jsonBody, jsonResponse, listOf, PaginationQuery } from './common.ts';
import type { RouteModule } from './deps.ts';
import { createLogger } from './logger.ts';
import { serveNode } from './node.ts';

const Widget = z.object({ id: z.string(), email: z.string(), attributes: z.object({ floors: z.number().int() }).optional() }).openapi('Widget');

const widgets: RouteModule = (app) => {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/widgets',
      tags: ['system'],
      security: bearer,
      request: { body: jsonBody(z.object({ email: z.email(), attributes: z.object({ floors: z.number().int() }).optional(), password: z.string().optional() })) },
      responses: { 201: jsonResponse(Widget, 'Created'), ...errorResponses(400, 401, 409, 415) },
    }),
    (c) => {
      const body = c.req.valid('json');
      if (body.email === 'taken@example.com') throw conflict('email', 'This e-mail is already in use', { existingId: 'W1' });
      if (body.email === 'boom@example.com') throw new Error('db password is hunter2');
      if (body.email === 'str@example.com') throw 'a string, not an Error';
      c.var.log.info({ body, headers: c.req.header() }, 'creating widget');
      return json201(c, { id: 'W2', email: body.email, ...(body.attributes ? { attributes: body.attributes } : {}) });
    },
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/widgets',
      request: { query: PaginationQuery },
      responses: { 200: jsonResponse(listOf(Widget), 'A page'), ...errorResponses(400) },
    }),
    (c) => c.json({ items: [], cursor: c.req.valid('query').limit === 1 ? 'next' : null }, 200),
  );
};

const gadgets: RouteModule = (app) => {
  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/gadgets/{gadgetId}',
      request: {
        params: z.object({ gadgetId: z.string().regex(/^G\d+$/) }),
        headers: z.object({ 'X-Gadget-Mode': z.enum(['fast', 'slow']) }),
        body: { content: { 'application/json': { schema: z.object({ color: z.string().optional() }) } } },
      },
      responses: { 200: jsonResponse(z.object({ id: z.string(), mode: z.string(), color: z.string().nullable() }), 'Updated'), ...errorResponses(400, 415) },
    }),
    (c) => c.json({ id: c.req.valid('param').gadgetId, mode: c.req.valid('header')['X-Gadget-Mode'], color: c.req.valid('json').color ?? null }, 200),
  );
};

function setup() {
  const lines: string[] = [];
  const stream = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
  const logger = createLogger('info', stream);
  const app = createApp({ version: '9.9.9', dynamoEndpoint: 'http://user:pw@localhost:8000', tableName: 'app_data', logger, routes: [widgets, gadgets] });
  const post = (body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    app.request('/v1/widgets', { method: 'POST', body, headers });
  return { app, lines, post, logs: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const expectProblem = async (res: Response, status: number, code: string) => {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = (await res.json()) as Record<string, unknown> & { errors?: { field: string; message: string }[] };
  expect(body).toMatchObject({ status, code, type: expect.any(String), title: expect.any(String), detail: expect.any(String), instance: expect.any(String) });
  expect(body.requestId).toBe(res.headers.get('x-request-id'));
  return body;
};

describe('system routes', () => {
  it('GET /health reports status, version and the table', async () => {
    const res = await setup().app.request('/health');
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toEqual({ status: 'ok', version: '9.9.9', dynamodb: { endpoint: 'http://localhost:8000', table: 'app_data' }, time: expect.any(String) });
    expect(Number.isNaN(Date.parse(body.time))).toBe(false);
  });

  it('GET /openapi.json is OpenAPI 3.1 with the routes, the bearer scheme and tags', async () => {
    const doc = await (await setup().app.request('/openapi.json')).json();
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info).toMatchObject({ title: 'Gatehouse', version: '9.9.9' });
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/health', '/v1/widgets']));
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', description: 'JWT or API key' });
    expect(doc.components.schemas.Problem).toBeDefined();
    expect(doc.paths['/v1/widgets'].post.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths['/v1/widgets'].post.responses['409'].content['application/problem+json']).toBeDefined();
    expect(doc.paths['/v1/widgets'].get.parameters.map((p: { name: string }) => p.name)).toEqual(['limit', 'cursor']);
    expect(doc.tags.map((t: { name: string }) => t.name)).toContain('access');
  });

  it('GET /docs is an offline page whose assets are served from node_modules', async () => {
    const { app } = setup();
    const res = await app.request('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).not.toMatch(/https?:\/\//);
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => new URL(m[1], 'http://h/docs').pathname);
    expect(refs).toEqual(expect.arrayContaining(['/docs/assets/swagger-ui.css', '/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui-standalone-preset.js', '/docs/assets/init.js']));
    for (const ref of refs) {
      const asset = await app.request(ref);
      expect(asset.status, ref).toBe(200);
      expect(asset.headers.get('content-type'), ref).toMatch(ref.endsWith('.css') ? /^text\/css/ : ref.endsWith('.js') ? /^text\/javascript/ : /^image\//);
      expect((await asset.arrayBuffer()).byteLength, ref).toBeGreaterThan(0);
    }
    const init = await (await app.request('/docs/assets/init.js')).text();
    expect(init).toContain("'openapi.json'");
    await expectProblem(await app.request('/docs/assets/..%2Fpackage.json'), 404, 'NOT_FOUND');
  });
});

describe('request ids', () => {
  it('unknown route: 404 problem whose requestId is the x-request-id header', async () => {
    const res = await setup().app.request('/nope');
    const body = await expectProblem(res, 404, 'NOT_FOUND');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(body.instance).toBe('/nope');
  });

  it('echoes a valid incoming x-request-id and replaces an invalid one', async () => {
    const { app, logs } = setup();
    const ok = await app.request('/health', { headers: { 'x-request-id': 'abc-123.X_y' } });
    expect(ok.headers.get('x-request-id')).toBe('abc-123.X_y');
    expect(logs().at(-1)).toMatchObject({ requestId: 'abc-123.X_y', method: 'GET', path: '/health', status: 200, ms: expect.any(Number), msg: 'request' });
    const bad = await app.request('/health', { headers: { 'x-request-id': 'no spaces<script>' } });
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9A-Z]{26}$/);
    const long = await app.request('/health', { headers: { 'x-request-id': 'a'.repeat(129) } });
    expect(long.headers.get('x-request-id')).not.toBe('a'.repeat(129));
  });
});

describe('problems from route modules', () => {
  it('creates through a valid request', async () => {
    const res = await setup().post(JSON.stringify({ email: 'a@example.com', attributes: { floors: 3 } }));
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ id: 'W2', email: 'a@example.com', attributes: { floors: 3 } });
  });

  it('malformed JSON: 400 naming body', async () => {
    const body = await expectProblem(await setup().post('{"email": '), 400, 'VALIDATION');
    expect(body.errors).toEqual([{ field: 'body', message: expect.stringMatching(/not valid JSON/) }]);
    const empty = await expectProblem(await setup().post(''), 400, 'VALIDATION');
    expect(empty.errors?.[0].field).toBe('body');
  });

  it('a body that is not an object: 400 naming body', async () => {
    const body = await expectProblem(await setup().post('"just a string"'), 400, 'VALIDATION');
    expect(body.errors?.[0].field).toBe('body');
  });

  it('missing and invalid fields: 400 naming each field by its dotted path', async () => {
    const missing = await expectProblem(await setup().post('{}'), 400, 'VALIDATION');
    expect(missing.errors).toEqual([{ field: 'email', message: 'Required' }]);
    const invalid = await expectProblem(await setup().post(JSON.stringify({ email: 'nope', attributes: { floors: 'x' } })), 400, 'VALIDATION');
    expect(invalid.errors?.map((e) => e.field)).toEqual(['email', 'attributes.floors']);
  });

  it('query validation names query.limit', async () => {
    const { app } = setup();
    const bad = await expectProblem(await app.request('/v1/widgets?limit=500'), 400, 'VALIDATION');
    expect(bad.errors?.[0].field).toBe('query.limit');
    const ok = await app.request('/v1/widgets?limit=1');
    expect(await ok.json()).toEqual({ items: [], cursor: 'next' });
    expect(await (await app.request('/v1/widgets')).json()).toEqual({ items: [], cursor: null });
  });

  it('wrong or missing content-type: 415', async () => {
    const { post } = setup();
    await expectProblem(await post('email=a', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    await expectProblem(await post('{"email":"a@example.com"}', {}), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('path, header and optional body are validated in one pass: fields named, header keys as the schema spells them', async () => {
    const { app } = setup();
    const put = (id: string, headers: Record<string, string>, body?: string) => app.request(`/v1/gadgets/${id}`, { method: 'PUT', headers, body });
    const ok = await put('G1', { 'x-gadget-mode': 'fast', 'content-type': 'application/json' }, '{"color":"red"}');
    expect(await ok.json()).toEqual({ id: 'G1', mode: 'fast', color: 'red' });
    // An optional body may be absent altogether.
    expect(await (await put('G2', { 'x-gadget-mode': 'slow' })).json()).toEqual({ id: 'G2', mode: 'slow', color: null });
    const badPath = await expectProblem(await put('nope', { 'x-gadget-mode': 'fast' }), 400, 'VALIDATION');
    expect(badPath.errors?.map((e) => e.field)).toEqual(['path.gadgetId']);
    const badHeader = await expectProblem(await put('G1', { 'x-gadget-mode': 'warp' }), 400, 'VALIDATION');
    expect(badHeader.errors?.map((e) => e.field)).toEqual(['header.X-Gadget-Mode']);
    await expectProblem(await put('G1', { 'x-gadget-mode': 'fast', 'content-type': 'text/plain' }, 'red'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    await expectProblem(await put('G1', { 'x-gadget-mode': 'fast', 'content-type': 'application/json' }, '{"color":'), 400, 'VALIDATION');
  });

  it('too large a body: 413', async () => {
    await expectProblem(await setup().post(JSON.stringify({ email: 'a@example.com', pad: 'x'.repeat(1024 * 1024) })), 413, 'ITEM_TOO_LARGE');
  });

  it('a GatehouseError keeps its status, code, errors and extra details', async () => {
    const body = await expectProblem(await setup().post(JSON.stringify({ email: 'taken@example.com' })), 409, 'CONFLICT');
    expect(body).toMatchObject({ detail: 'This e-mail is already in use', errors: [{ field: 'email', message: 'This e-mail is already in use' }], existingId: 'W1' });
  });

  it('an unexpected exception: 500 INTERNAL, logged with the request id, message not leaked', async () => {
    const { post, logs } = setup();
    const res = await post(JSON.stringify({ email: 'boom@example.com' }));
    const text = await res.clone().text();
    const body = await expectProblem(res, 500, 'INTERNAL');
    expect(text).not.toContain('hunter2');
    expect(text).not.toMatch(/at .*\.ts:\d+/);
    const failure = logs().find((l) => l.msg === 'request failed');
    expect(failure).toMatchObject({ level: 50, requestId: body.requestId, err: { message: 'db password is hunter2' } });
  });

  it('a thrown non-Error still becomes a 500 problem', async () => {
    await expectProblem(await setup().post(JSON.stringify({ email: 'str@example.com' })), 500, 'INTERNAL');
  });

  it('GatehouseError 5xx hides its message', async () => {
    const { app } = setup();
    app.get('/late', () => { throw new GatehouseError('CONFIG', 'GATEHOUSE_ADMIN_API_KEY=abc is too short'); });
    const res = await app.request('/late');
    expect(await res.clone().text()).not.toContain('abc');
    await expectProblem(res, 500, 'CONFIG');
  });
});

describe('logging', () => {
  it('never writes credentials', async () => {
    const { post, lines } = setup();
    const res = await post(JSON.stringify({ email: 'a@example.com', password: 'pw-hunter2' }), {
      'content-type': 'application/json',
      authorization: 'Bearer secret123',
      cookie: 'session=cookie-secret',
    });
    expect(res.status).toBe(201);
    const out = lines.join('');
    expect(out).toContain('creating widget');
    expect(out).toContain('[REDACTED]');
    expect(out).not.toContain('secret123');
    expect(out).not.toContain('cookie-secret');
    expect(out).not.toContain('pw-hunter2');
  });

  it('redacts secret fields at depth', () => {
    const lines: string[] = [];
    const log = createLogger('info', { write: (s: string) => void lines.push(s) });
    log.info({ token: 't1', a: { apiKey: 'k1', b: { secret: 's1', headers: { 'set-cookie': 'c1' } } } });
    expect(lines.join('')).not.toMatch(/t1|k1|s1|c1/);
  });
});

describe('serveNode', () => {
  it('body limit over a real socket: Content-Length beyond the limit is 413 before the body is read; chunked bodies are counted', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } }));
    const app = createApp({ version: '1', dynamoEndpoint: 'x', tableName: 't', logger, routes: [widgets], maxBodyBytes: 1024 });
    const server = await serveNode(app, 0, '127.0.0.1');
    const url = `http://127.0.0.1:${server.port}/v1/widgets`;
    try {
      const small = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'a@example.com' }) });
      expect(small.status).toBe(201);
      const big = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'a@example.com', pad: 'x'.repeat(2000) }) });
      await expectProblem(big, 413, 'ITEM_TOO_LARGE');
      // No Content-Length: a streamed (chunked) body goes through the counting limit.
      const chunked = (text: string) =>
        fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: new Blob([text]).stream(), duplex: 'half' } as RequestInit);
      expect((await chunked(JSON.stringify({ email: 'b@example.com' }))).status).toBe(201);
      await expectProblem(await chunked(JSON.stringify({ email: 'b@example.com', pad: 'x'.repeat(2000) })), 413, 'ITEM_TOO_LARGE');
    } finally {
      await server.close();
    }
  });

  it('a body that came with its request is read at once; one split across packets or without Content-Length is read as a stream; keep-alive and pipelining survive bodies nobody read', async () => {
    const echo: RouteModule = (app) => {
      app.openapi(
        createRoute({ method: 'post', path: '/v1/echo', request: { body: jsonBody(z.object({ n: z.number() })) }, responses: { 200: jsonResponse(z.object({ n: z.number(), arrived: z.boolean() }), 'Echo'), ...errorResponses(400) } }),
        (c) => c.json({ n: c.req.valid('json').n, arrived: Buffer.isBuffer((c.env as { incoming?: { rawBody?: unknown } }).incoming?.rawBody) }, 200),
      );
      app.post('/v1/ignore', (c) => c.text('ignored'));
    };
    const app = createApp({ version: '1', dynamoEndpoint: 'x', tableName: 't', logger: createLogger('silent'), routes: [echo] });
    const server = await serveNode(app, 0, '127.0.0.1');
    // One keep-alive connection; each request is written in the given pieces, 30 ms apart.
    const socket = connect(server.port, '127.0.0.1');
    let received = '';
    socket.on('data', (d) => (received += String(d)));
    const exchange = async (...pieces: string[]) => {
      received = '';
      for (const [i, p] of pieces.entries()) {
        if (i) await new Promise((r) => setTimeout(r, 30));
        socket.write(p);
      }
      for (let i = 0; i < 200 && !/\r\n\r\n[\s\S]*$/.test(received); i++) await new Promise((r) => setTimeout(r, 10));
      for (let i = 0; i < 200; i++) {
        const [head, body = ''] = received.split('\r\n\r\n');
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? -1);
        if (length >= 0 && Buffer.byteLength(body) >= length) return { status: Number(head.split(' ')[1]), body };
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`no complete response: ${received}`);
    };
    const post = (path: string, body: string, headers = `content-length: ${Buffer.byteLength(body)}\r\n`) => `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${headers}\r\n${body}`;
    try {
      expect(await exchange(post('/v1/echo', '{"n":1}'))).toEqual({ status: 200, body: '{"n":1,"arrived":true}' });
      const split = post('/v1/echo', '{"n":2}');
      expect(await exchange(split.slice(0, -4), split.slice(-4))).toEqual({ status: 200, body: '{"n":2,"arrived":false}' });
      expect(await exchange(post('/v1/ignore', '{"n":3}'))).toEqual({ status: 200, body: 'ignored' });
      const ignoredSplit = post('/v1/ignore', '{"n":3}');
      expect(await exchange(ignoredSplit.slice(0, -4), ignoredSplit.slice(-4))).toEqual({ status: 200, body: 'ignored' });
      expect(await exchange(post('/v1/echo', '\uFEFF{"n":4}'))).toEqual({ status: 200, body: '{"n":4,"arrived":true}' }); // a BOM is dropped, as the adapter does
      const malformed = await exchange(post('/v1/echo', '{"n":'));
      expect(malformed.status).toBe(400);
      expect((await exchange(post('/v1/echo', ''))).status).toBe(400); // empty: the schema names the missing field
      expect(await exchange(post('/v1/echo', '7\r\n{"n":5}\r\n0\r\n\r\n', 'transfer-encoding: chunked\r\n'))).toEqual({ status: 200, body: '{"n":5,"arrived":false}' });
      expect(await exchange(post('/v1/echo', '{"n":6}'))).toEqual({ status: 200, body: '{"n":6,"arrived":true}' });
      // Pipelined: three requests in one write, each answered with its own body, in order.
      received = '';
      socket.write(post('/v1/echo', '{"n":7}') + post('/v1/echo', '{"n":8}') + post('/v1/echo', '{"n":9}'));
      const bodies = () => [...received.matchAll(/\{"n":\d+,"arrived":(true|false)\}/g)].map((m) => m[0]);
      for (let i = 0; i < 200 && bodies().length < 3; i++) await new Promise((r) => setTimeout(r, 10));
      expect(bodies()).toEqual(['{"n":7,"arrived":true}', '{"n":8,"arrived":true}', '{"n":9,"arrived":true}']);
    } finally {
      socket.destroy();
      await server.close();
    }
  });

  it('a handler that returns its own Response still carries x-request-id', async () => {
    const { app } = setup();
    app.get('/raw', () => new Response('raw'));
    const res = await app.request('/raw', { headers: { 'x-request-id': 'raw-1' } });
    expect(await res.text()).toBe('raw');
    expect(res.headers.get('x-request-id')).toBe('raw-1');
  });

  it('serves the app on a real port and closes', async () => {
    const { app } = setup();
    app.get('/raw', () => new Response('raw'));
    const server = await serveNode(app, 0, '127.0.0.1');
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/health`, { headers: { 'x-request-id': 'net-1' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toBe('net-1');
      // Every kind of response carries exactly one request id over a socket too: a created
      // resource with headers of its own, a problem, and a handler's own Response.
      const created = await fetch(`http://127.0.0.1:${server.port}/v1/widgets`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'net-2' }, body: '{"email":"a@example.com"}' });
      expect([created.status, created.headers.get('x-request-id')]).toEqual([201, 'net-2']);
      const problem = await fetch(`http://127.0.0.1:${server.port}/v1/widgets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
      expect(problem.status).toBe(400);
      expect(((await problem.json()) as { requestId: string }).requestId).toBe(problem.headers.get('x-request-id'));
      const raw = await fetch(`http://127.0.0.1:${server.port}/raw`, { headers: { 'x-request-id': 'net-3' } });
      expect(raw.headers.get('x-request-id')).toBe('net-3');
    } finally {
      await server.close();
    }
  });
});
