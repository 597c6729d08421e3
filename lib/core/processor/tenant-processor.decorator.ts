import { Injectable, SetMetadata, applyDecorators } from '@nestjs/common';
import type { WorkerOptions } from 'bullmq';
import { TENANT_PROCESSOR_METADATA } from '../../tenant-queue.constants';

/**
 * BullMQ worker options; `connection` and `prefix` come from the module.
 * @publicApi
 */
export type TenantProcessorOptions = Omit<WorkerOptions, 'connection' | 'prefix'> & {
  /**
   * Deadline of each attempt, in ms. The handler's `AbortSignal` aborts at the deadline and the
   * attempt fails with `[TIMEOUT]` (then retries per the job's attempts). A job's own
   * `withRunOptions(data, { timeoutMs })` overrides it.
   * @default undefined (no deadline)
   */
  timeoutMs?: number;
  /**
   * The pools of the queue this process consumes, one BullMQ worker each (with `concurrency`
   * each). The queue's own name is its shared pool. Set it per process, e.g.
   * `pools: process.env.IMPORT_POOLS?.split(',')`, to run a dedicated pool on its own workers.
   * @default every pool of the queue (the shared one and each dedicated one)
   */
  pools?: string[];
};

export interface TenantProcessorMetadata {
  queue: string;
  options: TenantProcessorOptions;
}

/**
 * Marks a class extending `TenantWorkerHost` as the worker of a registered queue. Each job runs in
 * a fresh tenant context restored from its envelope.
 * @publicApi
 */
export function TenantProcessor(
  queue: string,
  options: TenantProcessorOptions = {},
): ClassDecorator {
  const metadata: TenantProcessorMetadata = { queue, options };
  return applyDecorators(Injectable(), SetMetadata(TENANT_PROCESSOR_METADATA, metadata));
}
