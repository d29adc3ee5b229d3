/** The tenancy domain: tenants, the scope tree, child resources and the catalog. */
import type { Store } from '../store/store.ts';
import { CatalogService } from './catalog.ts';
import type { Hierarchy } from './model.ts';
import { TenancyRepository } from './repository.ts';
import { ResourceService } from './resources.ts';
import { ScopeService, TenantService } from './service.ts';

export interface TenancyServices {
  hierarchy: Hierarchy;
  repo: TenancyRepository;
  tenants: TenantService;
  scopes: ScopeService;
  resources: ResourceService;
  catalog: CatalogService;
}

export function createTenancy(o: { store: Store; hierarchy: Hierarchy }): TenancyServices {
  const repo = new TenancyRepository(o.store, o.hierarchy);
  return {
    hierarchy: o.hierarchy,
    repo,
    tenants: new TenantService(repo, o.hierarchy),
    scopes: new ScopeService(repo, o.hierarchy),
    resources: new ResourceService(repo, o.hierarchy),
    catalog: new CatalogService(repo, o.hierarchy),
  };
}

export { loadHierarchy, parseHierarchy, BUILT_IN_HIERARCHIES } from './hierarchy.ts';
export { tenancyRoutes } from './routes.ts';
export type { Hierarchy } from './model.ts';
