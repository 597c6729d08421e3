import { declareSeam } from '../seams/seam-declaration';

/**
 * A provider that runs workers of its own and binds their hosts' `@OnTenantWorkerEvent` methods
 * (the `@nestjs/bullmq` bridge); the explorer asks it which hosts it binds.
 */
export interface WorkerEventSource {
  /** Whether this source binds the `@OnTenantWorkerEvent` methods of `host` at bootstrap. */
  bindsWorkerEventsOf(host: object): boolean;
}

/** Marks a provider as a `WorkerEventSource`. */
export const TenantWorkerEventSource = (): ClassDecorator =>
  declareSeam({ kind: 'worker-event-source', phase: 0, order: 0 });
