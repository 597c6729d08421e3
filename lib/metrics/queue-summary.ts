import { waitingCount } from '../core/bullmq';
import { workersOn } from '../core/processor/queue-consumer.check';
import type { TenantQueueRegistry } from '../core/queues/tenant-queue.registry';
import { TenantQueueSummary } from './queue-summary.interface';

/**
 * One queue's workers (in all processes: BullMQ's own worker registry on Redis) and job counts.
 * A queue registered here has a producer here, so no worker anywhere means its jobs wait.
 */
export async function summarizeQueue(
  registry: TenantQueueRegistry,
  name: string,
  fair: boolean,
): Promise<TenantQueueSummary> {
  const producer = registry.getQueue(name);
  const local = registry.getWorker(name) !== undefined;
  const [remote, counts] = await Promise.all([
    workersOn(producer.bullQueue),
    producer.bullQueue.getJobCounts(
      'waiting',
      'prioritized',
      'active',
      'delayed',
      'failed',
      'completed',
    ),
  ]);
  const workers = remote === null ? null : Math.max(remote, local ? 1 : 0);
  return {
    queue: name,
    poolOf: producer.definition.poolOf ?? null,
    workers,
    noConsumer: workers === 0,
    fair,
    counts: {
      waiting: waitingCount(counts),
      prioritized: counts.prioritized ?? 0,
      active: counts.active ?? 0,
      delayed: counts.delayed ?? 0,
      failed: counts.failed ?? 0,
      completed: counts.completed ?? 0,
    },
  };
}
