import type { CoreQueueOptions } from '../core/types/queue-definition.interface';
import type { DeadLetterQueueOptions } from '../dead-letters';
import type { FairnessQueueOptions } from '../fairness';
import type { PoolQueueOptions } from '../pools';

export type { TenantRoute, TenantPoolRouting } from '../pools';

/**
 * Options of `TenantQueueModule.registerQueue(...)`: one queue and its defaults (the kernel's,
 * plus the dead letters', fairness and pools slices, each declared by its feature).
 * @publicApi
 */
export interface RegisterTenantQueueOptions
  extends CoreQueueOptions, DeadLetterQueueOptions, FairnessQueueOptions, PoolQueueOptions {}

export type { TenantQueueDefinition } from '../core/types/queue-definition.interface';
