/**
 * Request validation of OpenAPI routes in one middleware per route, in place of the chain that
 * @hono/zod-openapi builds (a validator per request part plus a media-type gate: four or five async
 * layers, each parsing with zod's async path). Why: zod 4 compiles an object schema into a fast
 * function for synchronous parses only; `safeParseAsync` interprets the schema on every request.
 * Measured on POST /v1/tenants/{t}/check: see docs/design.md, "The HTTP request path".
 *
 * The outcomes are the library's, in its order: query, path, headers, then the media type (415
 * when a body is not JSON, or has no content type), then the JSON body (400 when malformed); each
 * result goes through the route's hook or the app's default hook. Only JSON bodies are supported:
 * a route declaring another body type is refused when it is registered.
 */
import type { OpenAPIHono, RouteConfig } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import type { Context, Env, MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';

type Target = 'query' | 'param' | 'header' | 'json';
type Schema = z.ZodType;
type ParseResult = { success: true; data: unknown } | { success: false; error: z.ZodError };
type HookResult = Response | { response: Response } | void | undefined;
// The library's hook contract: the raw input, the parse result and the target.
type Hook = (result: { data: unknown; target: Target } & ParseResult, c: Context) => HookResult | Promise<HookResult>;

// The library's own tests of a media type (zod-openapi and hono/validator), kept identical.
const JSON_CONTENT_TYPE = /^application\/([a-z-.]+\+)?json/i;
const JSON_REQUEST = /^application\/([a-z-.]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;
const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;
const mediaTypeOf = (contentType: string) => contentType.split(';')[0].trim().toLowerCase();

/** Synchronous parse (compiled), falling back to the async path only for a schema that needs it. */
function parse(schema: Schema, value: unknown): ParseResult | Promise<ParseResult> {
  try {
    return schema.safeParse(value) as ParseResult;
  } catch (err) {
    if (err instanceof z.core.$ZodAsyncError) return schema.safeParseAsync(value) as Promise<ParseResult>;
    throw err;
  }
}

/** Header names as the schema spells them (Hono hands them over lower-cased). */
function headerKeyMap(schema: Schema): Map<string, string> {
  const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape ?? {};
  return new Map(Object.keys(shape).map((k) => [k.toLowerCase(), k]));
}

const utf8 = new TextDecoder(); // as @hono/node-server decodes (a BOM is dropped)

/** A body the Node adapter already holds whole (`requestListener` in node.ts): parsed without a promise. */
function arrivedBody(c: Context): Buffer | undefined {
  const raw = (c.env as { incoming?: { rawBody?: unknown } } | undefined)?.incoming?.rawBody;
  return raw instanceof Buffer ? raw : undefined;
}

async function bodyIsEmpty(c: Context): Promise<boolean> {
  if (c.req.raw.body === null) return true;
  return (await c.req.arrayBuffer()).byteLength === 0;
}

interface Part {
  target: Target;
  schema: Schema;
  read: (c: Context) => unknown;
}

/** The one validation middleware of a route; undefined when the route declares no input. */
export function routeValidator(route: RouteConfig, hook: Hook): MiddlewareHandler | undefined {
  const req = route.request;
  const parts: Part[] = [];
  if (req?.query) {
    const schema = req.query as Schema;
    parts.push({ target: 'query', schema, read: (c) => Object.fromEntries(Object.entries(c.req.queries()).map(([k, v]) => [k, v.length === 1 ? v[0] : v])) });
  }
  if (req?.params) parts.push({ target: 'param', schema: req.params as Schema, read: (c) => c.req.param() });
  if (req?.headers) {
    const schema = req.headers as Schema;
    const keyMap = headerKeyMap(schema);
    parts.push({ target: 'header', schema, read: (c) => Object.fromEntries(Object.entries(c.req.header()).map(([k, v]) => [keyMap.get(k) ?? k, v])) });
  }
  if ((req as { cookies?: unknown } | undefined)?.cookies) throw new Error(`${route.method} ${route.path}: cookie parameters are not supported`);

  const content = req?.body?.content ?? {};
  const mediaTypes = Object.keys(content);
  for (const m of mediaTypes) {
    if (!JSON_CONTENT_TYPE.test(m)) throw new Error(`${route.method} ${route.path}: only JSON request bodies are supported, not ${m}`);
  }
  const bodySchema = mediaTypes.length ? ((content[mediaTypes[0]] as { schema?: Schema } | undefined)?.schema) : undefined;
  const bodyRequired = req?.body?.required === true;
  if (!parts.length && !bodySchema) return undefined;

  // Synchronous unless the schema or the hook is asynchronous: an await per part costs a
  // suspension and a microtask on every request.
  type Outcome = Response | undefined;
  const outcome = (c: Context, target: Target, result: ParseResult, answer: HookResult): Outcome => {
    if (answer instanceof Response) return answer;
    if (answer && 'response' in answer) return answer.response;
    if (!result.success) return c.json(result, 400);
    c.req.addValidatedData(target, result.data as never);
    return undefined;
  };
  const conclude = (c: Context, target: Target, result: ParseResult, value: unknown): Outcome | Promise<Outcome> => {
    const answer = hook({ data: value, ...result, target }, c);
    return answer instanceof Promise ? answer.then((a) => outcome(c, target, result, a)) : outcome(c, target, result, answer);
  };
  const accept = (c: Context, target: Target, schema: Schema, value: unknown): Outcome | Promise<Outcome> => {
    const result = parse(schema, value);
    return result instanceof Promise ? result.then((r) => conclude(c, target, r, value)) : conclude(c, target, result, value);
  };

  return async (c, next) => {
    for (const p of parts) {
      let stop = accept(c, p.target, p.schema, p.read(c));
      if (stop instanceof Promise) stop = await stop;
      if (stop) return stop;
    }
    if (bodySchema) {
      const contentType = c.req.header('content-type');
      if (contentType !== undefined ? !JSON_REQUEST.test(contentType) : !(await bodyIsEmpty(c))) throw new HTTPException(415, { message: 'Unsupported Media Type' });
      if (bodyRequired || (contentType !== undefined && JSON_CONTENT_TYPE.test(contentType))) {
        let value: unknown = {};
        if (contentType !== undefined && JSON_MEDIA_TYPE.test(mediaTypeOf(contentType))) {
          try {
            const arrived = arrivedBody(c);
            value = arrived ? JSON.parse(utf8.decode(arrived)) : await c.req.json();
          } catch {
            throw new HTTPException(400, { message: 'Malformed JSON in request body' });
          }
        }
        let stop = accept(c, 'json', bodySchema, value);
        if (stop instanceof Promise) stop = await stop;
        if (stop) return stop;
      } else {
        c.req.addValidatedData('json', {});
      }
    }
    await next();
  };
}

/**
 * Makes `app.openapi(route, handler, hook?)` register the route in the OpenAPI registry as the
 * library does, and validate it with `routeValidator`. Call once, right after creating the app.
 */
export function useOneValidatorPerRoute<E extends Env>(app: OpenAPIHono<E>): void {
  const defaultHook = app.defaultHook as unknown as Hook | undefined;
  const openapi = (config: RouteConfig & { hide?: boolean }, handler: MiddlewareHandler, hook?: Hook) => {
    const { middleware, hide, ...route } = config;
    if (!hide) app.openAPIRegistry.registerPath(route);
    const validate = routeValidator(route, hook ?? defaultHook ?? (() => undefined));
    const before = middleware ? (Array.isArray(middleware) ? middleware : [middleware]) : [];
    app.on([route.method], [route.path.replaceAll(/\/{(.+?)}/g, '/:$1')], ...(before as MiddlewareHandler[]), ...(validate ? [validate] : []), handler);
    return app;
  };
  Object.assign(app, { openapi });
}
