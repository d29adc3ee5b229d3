/**
 * The license-expiry job as a Lambda handler for a schedule (EventBridge Scheduler / rule), e.g.
 * daily with input `{"within": "30d"}`. Configuration comes from the environment:
 * GATEHOUSE_TABLE, GATEHOUSE_HIERARCHY, GATEHOUSE_MAIL_TRANSPORT (ses in production),
 * GATEHOUSE_MAIL_FROM, GATEHOUSE_EXPIRY_WITHIN (default 30d). Clients are built once per container.
 */
import { readEnv } from '../config.ts';
import { createDynamoClients } from '../store/client.ts';
import { Store } from '../store/store.ts';
import { loadHierarchy } from '../tenancy/hierarchy.ts';
import { runLicenseExpiry, type LicenseExpiryDeps, type LicenseExpirySummary } from './expiry.ts';
import { mailerFromEnv } from './transport.ts';

export interface ExpiryEvent {
  within?: string;
  threshold?: string;
  dryRun?: boolean;
}

export type ExpiryResult = Omit<LicenseExpirySummary, 'notices'> & { notices: number };

export function depsFromEnv(env: NodeJS.ProcessEnv = process.env): LicenseExpiryDeps {
  const e = readEnv(env);
  const { doc } = createDynamoClients({ endpoint: e.AWS_ENDPOINT_URL_DYNAMODB, region: e.AWS_REGION });
  const store = new Store({ doc, tableName: e.GATEHOUSE_TABLE, cursorSecret: e.GATEHOUSE_CURSOR_SECRET });
  return { store, hierarchy: loadHierarchy(e.GATEHOUSE_HIERARCHY), now: () => new Date(), mailer: mailerFromEnv(store, env), sender: env.GATEHOUSE_MAIL_FROM };
}

export function createLicenseExpiryHandler(getDeps: () => LicenseExpiryDeps, env: NodeJS.ProcessEnv = process.env) {
  let deps: LicenseExpiryDeps | undefined;
  return async (event: ExpiryEvent = {}): Promise<ExpiryResult> => {
    deps ??= getDeps();
    const summary = await runLicenseExpiry(deps, { within: event.within ?? env.GATEHOUSE_EXPIRY_WITHIN ?? '30d', threshold: event.threshold, dryRun: event.dryRun });
    // Failures are in the notification audit; the invocation result stays small.
    const { notices, ...rest } = summary;
    console.log(JSON.stringify({ msg: 'license-expiry', ...rest, notices: notices.length }));
    return { ...rest, notices: notices.length };
  };
}

export const handler = createLicenseExpiryHandler(() => depsFromEnv());
