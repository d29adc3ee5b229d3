/**
 * The entitlements module and its neighbours (audit trail, notifications, sessions): one factory
 * for the composition root.
 *
 *   const ent = createEntitlements({ store, hierarchy });
 *   createApp({ ..., routes: [...ent.routes] });
 */
import type { Store } from '../store/store.ts';
import type { Hierarchy } from '../tenancy/model.ts';
import type { RouteModule } from '../http/deps.ts';
import { createAuditService, type AuditService } from '../audit/service.ts';
import { auditRoutes, AUDIT_PERMISSIONS } from '../audit/routes.ts';
import { createNotificationAudit, type NotificationAuditService } from '../notifications/audit.ts';
import { runLicenseExpiry, type LicenseExpiryOptions, type LicenseExpirySummary } from '../notifications/expiry.ts';
import type { RecipientResolver } from '../notifications/recipients.ts';
import { notificationsRoutes } from '../notifications/routes.ts';
import { createOutboxMailer, type Mailer } from '../notifications/transport.ts';
import { createSessionService, type SessionService } from '../sessions/service.ts';
import { sessionsRoutes, SESSION_PERMISSIONS } from '../sessions/routes.ts';
import { createLicenseService, createProductService, type LicenseService, type ProductService } from './licenses.ts';
import { entitlementsRoutes, PERMISSIONS } from './routes.ts';
import { createSettingService, type SettingService } from './settings.ts';
import { createSubscriptionService, type SubscriptionService } from './subscriptions.ts';

export interface EntitlementsDeps {
  store: Store;
  hierarchy: Hierarchy;
  /** The clock of every service (defaults to the store's). */
  now?: () => Date;
  /** Notice transport; defaults to the development outbox. */
  mailer?: Mailer;
  /** Who receives a tenant's notices; defaults to its active `client_admin` users. */
  recipients?: RecipientResolver;
  /** From address of notices. */
  sender?: string;
  /** Also serve POST/GET /v1/products (default false: the tenancy catalog serves them). */
  productRoutes?: boolean;
}

export interface Entitlements {
  products: ProductService;
  licenses: LicenseService;
  subscriptions: SubscriptionService;
  settings: SettingService;
  audit: AuditService;
  notifications: NotificationAuditService;
  sessions: SessionService;
  mailer: Mailer;
  jobs: { licenseExpiry(opts: LicenseExpiryOptions): Promise<LicenseExpirySummary> };
  /** entitlementsRoutes, auditRoutes, notificationsRoutes, sessionsRoutes. */
  routes: RouteModule[];
  /** Every permission the routes declare (for the permission catalog). */
  permissions: string[];
}

export function createEntitlements(deps: EntitlementsDeps): Entitlements {
  const { store, hierarchy } = deps;
  const now = deps.now ?? store.now;
  const base = { store, hierarchy, now };
  const mailer = deps.mailer ?? createOutboxMailer(store);
  const products = createProductService(base);
  const licenses = createLicenseService(base);
  const subscriptions = createSubscriptionService(base);
  const settings = createSettingService(base);
  const audit = createAuditService(base);
  const notifications = createNotificationAudit({ store, T: hierarchy.T, now });
  const sessions = createSessionService(base);
  return {
    products,
    licenses,
    subscriptions,
    settings,
    audit,
    notifications,
    sessions,
    mailer,
    jobs: { licenseExpiry: (opts) => runLicenseExpiry({ ...base, mailer, recipients: deps.recipients, sender: deps.sender }, opts) },
    routes: [
      entitlementsRoutes({ products, licenses, subscriptions, settings, productRoutes: deps.productRoutes }),
      auditRoutes({ audit }),
      notificationsRoutes({ notifications, store }),
      sessionsRoutes({ sessions }),
    ],
    permissions: [...new Set([...Object.values(PERMISSIONS), ...Object.values(AUDIT_PERMISSIONS), ...Object.values(SESSION_PERMISSIONS)])].sort(),
  };
}

export { entitlementsRoutes } from './routes.ts';
export { auditRoutes } from '../audit/routes.ts';
export { notificationsRoutes } from '../notifications/routes.ts';
export { sessionsRoutes } from '../sessions/routes.ts';
