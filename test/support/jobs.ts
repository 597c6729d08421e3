import type { INestApplicationContext, Type } from '@nestjs/common';
import {
  EnqueuedJob,
  TenantContext,
  TenantJob,
  TenantJobOptions,
  TenantProcessor,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../lib';

/** `count` copies of `data`, each its own object. */
export function many<T extends object>(count: number, data: T = {} as T): T[] {
  return Array.from({ length: count }, () => ({ ...data }));
}

/**
 * Adds one job per item of `data` to `queue` as tenant `tenantId` (job name `name`, options `opts`
 * each), through `addBulk` in chunks of 1,000; resolves with what the queue returned, in order.
 */
export async function enqueue<T extends object>(
  app: INestApplicationContext,
  queue: string,
  tenantId: string,
  data: T[],
  opts?: TenantJobOptions,
  name = 'work',
): Promise<EnqueuedJob[]> {
  const target = app.get(TenantQueueRegistry).getQueue<T>(queue);
  const added: EnqueuedJob[] = [];
  await app.get(TenantContext).run(tenantId, async () => {
    for (let i = 0; i < data.length; i += 1000) {
      const chunk = data.slice(i, i + 1000).map((item) => ({ name, data: item, opts }));
      added.push(...(await target.addBulk(chunk)));
    }
  });
  return added;
}

/**
 * A `@TenantProcessor` class for `queue` (a spec registering one queue per case): each job goes
 * to `handle`, at most `concurrency` at once.
 */
export function processorFor<T extends object>(
  queue: string,
  concurrency: number,
  handle: (job: TenantJob<T>) => Promise<unknown>,
): Type<TenantWorkerHost> {
  @TenantProcessor(queue, { concurrency })
  class KitProcessor extends TenantWorkerHost {
    process(job: TenantJob<T>): Promise<unknown> {
      return handle(job);
    }
  }
  return KitProcessor;
}
