import { declareSeam } from '../seams/seam-declaration';

/**
 * Marks a provider as a `WorkerPlugin`: attached to each BullMQ worker the module starts, after
 * the plugins of lower `order` (the library's use 10, 20, 30...).
 */
export const TenantWorkerPlugin = (order: number): ClassDecorator =>
  declareSeam({ kind: 'worker-plugin', phase: 0, order });
