import { ClsServiceManager } from 'nestjs-cls';

/**
 * @internal Calls `fn` outside any tenant (CLS) context: where work that acts for every tenant
 * starts (a worker's main loop, the fair gate's tick), whoever asked for it.
 */
export function outsideTenantContext<T>(fn: () => T): T {
  return ClsServiceManager.getClsService().exit(fn);
}
