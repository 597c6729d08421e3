import { Injectable } from '@nestjs/common';
import { InvalidJobOptionsError } from '../core/errors';
import { isSafeText } from '../core/envelope/quick-check';
import { InvalidFairKeyError } from './errors';
import { PreparedJob } from '../core/queues/job-dispatcher.interface';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { QueueFeature, QueueOptionsSlice } from '../core/queues/queue-feature.interface';
import { TenantQueueFeature } from '../core/queues/queue-seams.decorator';
import { MAX_FAIR_KEY_LENGTH } from '../tenant-queue.constants';
import { Messages } from '../tenant-queue.messages';
import { FairnessQueueOptions, isFairnessOn, resolvedFairnessOf } from './fairness-options';
import { assertLane } from './modes/lanes/lanes';
import { budgetKeyGroup, checkBudget, checkSameBudget } from './modes/budget/budget';

type TenantLaneJob = PreparedJob & { opts: { lane?: string; fairKey?: string } };

/** The `fairness` and `budget` options of each queue, checked as it registers. */
export const fairQueueOptions: QueueOptionsSlice = {
  checkQueue(options, earlier) {
    const resolved = resolvedFairnessOf(options);
    const budget = checkBudget(options);
    if (budget === undefined || !resolved) return;
    // The first queue registered in the budget, to check the others against.
    const first = earlier.find(
      (queue) =>
        checkBudget(queue) === budget && isFairnessOn((queue as FairnessQueueOptions).fairness),
    );
    if (!first) return;
    checkSameBudget(budget, options.name, resolved, first.name, resolvedFairnessOf(first)!);
  },

  /** A queue of a budget takes the budget's hash tag (its pools too). */
  keyGroupOf(options) {
    const budget = checkBudget(options);
    return budget === undefined ? undefined : budgetKeyGroup(budget);
  },
};

/**
 * What fairness asks of every queue, also under `TenantQueueTestingModule` (no gate there): its
 * `fairness` options valid at `registerQueue`; a job's `lane` one the queue declares; a `fairKey`
 * only on a queue with `fairness.fairKey`; no `parent` (nor `deduplication`) on a fair queue (the job waits in the gate,
 * where BullMQ cannot link it to its parent); a `budget` only on fair queues, the same default cap
 * and rate limit on each of its queues.
 */
@Injectable()
@TenantQueueFeature(10, fairQueueOptions)
export class FairQueueFeature implements QueueFeature {
  jobCheckFor(definition: TenantQueueDefinition): (job: PreparedJob) => void {
    const options = resolvedFairnessOf(definition.registered);
    const fair = options !== undefined;
    const keyed = options?.fairKey !== undefined;
    const lanes = new Set(options?.lanes.map((lane) => lane.name));
    return (job: TenantLaneJob) => {
      const fairKey = job.opts.fairKey;
      if (fairKey !== undefined) {
        if (job.tenantId === undefined) {
          throw new InvalidFairKeyError(Messages.fairKeyWithoutTenant(definition.name, job.name));
        }
        if (!isSafeText(fairKey, MAX_FAIR_KEY_LENGTH)) {
          throw new InvalidFairKeyError(Messages.invalidFairKey(fairKey, MAX_FAIR_KEY_LENGTH));
        }
      }
      if (job.opts.lane !== undefined && !lanes.has(job.opts.lane)) {
        assertLane(definition, job.opts.lane);
      }
      if (fairKey !== undefined && !keyed) {
        throw new InvalidFairKeyError(Messages.fairKeysOff(definition.name));
      }
      if (fair && job.opts.parent !== undefined) {
        throw new InvalidJobOptionsError(
          'parent',
          Messages.invalidJobOption(
            definition.name,
            job.name,
            'parent',
            'is not supported on a fair queue (the job waits in the gate, where BullMQ cannot ' +
              'link it to its parent); put flows on a queue without fairness',
          ),
        );
      }
      if (fair && job.opts.deduplication !== undefined) {
        throw new InvalidJobOptionsError(
          'deduplication',
          Messages.invalidJobOption(
            definition.name,
            job.name,
            'deduplication',
            'is not supported on a fair queue (BullMQ would deduplicate the job when the gate ' +
              'admits it, after add() returned an id no job would have); use a jobId instead',
          ),
        );
      }
    };
  }
}
