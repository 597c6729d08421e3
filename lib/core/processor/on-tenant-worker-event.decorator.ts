import { SetMetadata } from '@nestjs/common';
import type { WorkerListener } from 'bullmq';
import { TENANT_WORKER_EVENT_METADATA } from '../../tenant-queue.constants';

/**
 * A BullMQ worker event name, as `@OnTenantWorkerEvent(event)` takes it.
 * @publicApi
 */
export type TenantWorkerEvent = keyof WorkerListener;

/**
 * Subscribes a `@TenantProcessor` method to a BullMQ worker event. For events that carry a job
 * (`active`, `progress`, `completed`, `failed`) the method runs in that job's tenant context.
 * @publicApi
 */
export const OnTenantWorkerEvent = (event: TenantWorkerEvent): MethodDecorator =>
  SetMetadata(TENANT_WORKER_EVENT_METADATA, event);
