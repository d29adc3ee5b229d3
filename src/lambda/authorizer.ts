/**
 * API Gateway (HTTP API, payload format 2.0) Lambda REQUEST authorizer.
 *
 * (token, method, route, path parameters) → the route map gives the permission and the tenant
 * parameter → the auth layer authenticates the token (JWT or API key, one strongly consistent
 * GetItem for keys) → the decision engine decides → an IAM policy on the route ARN, with context
 * `{ userId, tenantId, principalType, permission }` for the integration.
 *
 * Outcomes (source 003: a conflict is an answer, a transient failure is not):
 *  - allowed → Allow policy;
 *  - denied, unknown route, or any non-retryable failure → Deny policy (403; fail closed);
 *  - missing / invalid credentials → `Unauthorized` error (API Gateway: 401);
 *  - RETRYABLE / BATCH_INCOMPLETE / throttling (DynamoDB busy, JWKS unreachable) → an
 *    `AuthorizerUnavailableError` (status 503) is thrown: API Gateway answers 5xx and the client
 *    retries. (HTTP APIs render every authorizer failure as 500; a REST API can map the
 *    AUTHORIZER_FAILURE gateway response to 503.) Never a deny, never an allow.
 */
import { GatehouseError } from '../errors.ts';
import type { Principal } from '../http/caller.ts';
import { createRouteMatcher, type RouteMap } from './routes.ts';

export interface AuthorizerEventV2 {
  version?: string;
  type?: string;
  routeArn: string;
  identitySource?: string[] | null;
  routeKey?: string;
  rawPath?: string;
  headers?: Record<string, string | undefined>;
  pathParameters?: Record<string, string | undefined>;
  requestContext?: { http?: { method?: string; path?: string }; requestId?: string };
}

export interface IamPolicyResponse {
  principalId: string;
  policyDocument: { Version: '2012-10-17'; Statement: { Action: 'execute-api:Invoke'; Effect: 'Allow' | 'Deny'; Resource: string }[] };
  context: Record<string, string | number | boolean>;
}

export class AuthorizerUnavailableError extends Error {
  readonly statusCode = 503;
  constructor(cause?: unknown) {
    super('Service Unavailable', { cause });
    this.name = 'AuthorizerUnavailableError';
  }
}

export interface AuthorizerDeps {
  authenticate(credential: string): Promise<Principal>;
  decide(p: Principal, permission: string, tenantId: string | undefined): Promise<{ allowed: boolean; reason?: string; via?: string }>;
  routeMap: RouteMap;
  log?: (entry: Record<string, unknown>) => void;
}

const TRANSIENT = new Set(['RETRYABLE', 'BATCH_INCOMPLETE']);
const TRANSIENT_SDK = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded', 'InternalServerError', 'ServiceUnavailable', 'TimeoutError']);
const isTransient = (e: unknown) =>
  (e instanceof GatehouseError && TRANSIENT.has(e.code)) || TRANSIENT_SDK.has((e as { name?: string })?.name ?? '') || ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT'].includes((e as { code?: string })?.code ?? '');

const policy = (principalId: string, effect: 'Allow' | 'Deny', resource: string, context: IamPolicyResponse['context']): IamPolicyResponse => ({
  principalId,
  policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resource }] },
  context,
});

function bearerOf(event: AuthorizerEventV2): string | undefined {
  const header = event.identitySource?.[0] ?? event.headers?.authorization ?? event.headers?.Authorization;
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m?.[1];
}

export function createLambdaAuthorizer(deps: AuthorizerDeps) {
  const match = createRouteMatcher(deps.routeMap);
  const log = deps.log ?? (() => undefined);

  return async function authorize(event: AuthorizerEventV2): Promise<IamPolicyResponse> {
    const method = event.requestContext?.http?.method ?? event.routeKey?.split(' ')[0] ?? '';
    const rawPath = event.rawPath ?? event.requestContext?.http?.path ?? '';
    const declared = event.routeKey && deps.routeMap[event.routeKey] ? { routeKey: event.routeKey, rule: deps.routeMap[event.routeKey], params: event.pathParameters ?? {} } : undefined;
    const route = declared ?? match(method, rawPath);
    const requestId = event.requestContext?.requestId;

    const token = bearerOf(event);
    if (!token) throw new Error('Unauthorized');
    let principal: Principal;
    try {
      principal = await deps.authenticate(token);
    } catch (e) {
      if (isTransient(e)) {
        log({ requestId, outcome: 'unavailable', stage: 'authenticate' });
        throw new AuthorizerUnavailableError(e);
      }
      log({ requestId, outcome: 'unauthorized' });
      throw new Error('Unauthorized');
    }
    const principalId = principal.actor.id;
    if (!route) {
      log({ requestId, outcome: 'deny', reason: 'unknown-route', method, path: rawPath });
      return policy(principalId, 'Deny', event.routeArn, { reason: 'unknown-route' });
    }
    const tenantId = route.rule.tenantParam ? route.params[route.rule.tenantParam] : undefined;
    const context = {
      userId: principal.actor.id,
      principalType: principal.kind ?? principal.actor.type,
      permission: route.rule.permission,
      ...(tenantId ? { tenantId } : {}),
    };
    try {
      const d = await deps.decide(principal, route.rule.permission, tenantId);
      log({ requestId, outcome: d.allowed ? 'allow' : 'deny', route: route.routeKey, permission: route.rule.permission, reason: d.reason });
      return policy(principalId, d.allowed ? 'Allow' : 'Deny', event.routeArn, d.allowed ? context : { ...context, reason: d.reason ?? 'denied' });
    } catch (e) {
      if (isTransient(e)) {
        log({ requestId, outcome: 'unavailable', stage: 'decide' });
        throw new AuthorizerUnavailableError(e);
      }
      // A conflict or anything else that is not transient: an answer, and the answer is no.
      log({ requestId, outcome: 'deny', reason: 'error', code: (e as GatehouseError)?.code });
      return policy(principalId, 'Deny', event.routeArn, { ...context, reason: 'error' });
    }
  };
}

let deployed: Promise<ReturnType<typeof createLambdaAuthorizer>> | undefined;

/** Deployed handler: `lambda/authorizer.handler`. Built once per container from the environment. */
export async function handler(event: AuthorizerEventV2): Promise<IamPolicyResponse> {
  deployed ??= import('./runtime.ts').then(async ({ lambdaRuntime }) => {
    const rt = await lambdaRuntime();
    return createLambdaAuthorizer({ authenticate: rt.auth.authenticateCredential, decide: rt.auth.decide, routeMap: rt.routeMap, log: (e) => console.log(JSON.stringify(e)) });
  });
  deployed.catch(() => (deployed = undefined));
  return (await deployed)(event);
}
