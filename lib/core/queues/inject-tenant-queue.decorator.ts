import { Inject } from '@nestjs/common';
import { getTenantQueueToken } from '../../tenant-queue.constants';

/**
 * Injects the `TenantQueue` registered with `TenantQueueModule.registerQueue({ name })`.
 * @publicApi
 */
export const InjectTenantQueue = (name: string): ParameterDecorator & PropertyDecorator =>
  Inject(getTenantQueueToken(name));
