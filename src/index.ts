/** Gatehouse as a library. */
export { createGatehouse, VERSION, type Gatehouse, type GatehouseOptions } from './gatehouse.ts';
export { GatehouseError, type ErrorCode } from './errors.ts';
export { Store, tx } from './store/store.ts';
export { keys } from './store/keys.ts';
export { createTableInput, tableTemplateYaml } from './store/table.ts';
export { startDynamoLocal } from './engine/local.ts';
