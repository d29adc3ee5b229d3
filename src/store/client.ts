/** The one place that constructs DynamoDB clients. */
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { installAccounting } from './accounting.ts';

export interface ClientOptions {
  /** Overrides AWS_ENDPOINT_URL_DYNAMODB (e.g. the embedded DynamoDB Local). */
  endpoint?: string;
  region?: string;
  /** Extra SDK config (tests inject faults through a custom requestHandler or middleware). */
  sdk?: DynamoDBClientConfig;
}

/** Local endpoints need some credentials; DynamoDB Local accepts any. */
function isLocal(endpoint?: string) {
  return !!endpoint && /^https?:\/\/(localhost|127\.|\[::1\])/.test(endpoint);
}

// The SDK warns on every start that releases after January 2027 will need Node 22. The lockfile
// pins a release that supports Node 20; the engines field and docs/design.md record the plan.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export function createDynamoClients(opts: ClientOptions = {}) {
  const endpoint = opts.endpoint ?? process.env.AWS_ENDPOINT_URL_DYNAMODB;
  const local = isLocal(endpoint);
  const raw = new DynamoDBClient({
    ...(endpoint ? { endpoint } : {}),
    region: opts.region ?? process.env.AWS_REGION ?? (local ? 'local' : undefined),
    ...(local && !process.env.AWS_ACCESS_KEY_ID
      ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
    maxAttempts: 4,
    ...opts.sdk,
  });
  installAccounting(raw);
  const doc = DynamoDBDocumentClient.from(raw, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true },
    unmarshallOptions: { wrapNumbers: false },
  });
  return { raw, doc, endpoint: endpoint ?? `aws (${opts.region ?? process.env.AWS_REGION ?? 'default region'})` };
}
