import { Injectable } from '@nestjs/common';
import { InvalidFairKeyError, InvalidJobOptionsError } from '../core/errors';
import { PreparedJob } from '../core/queues/job-dispatcher.interface';
import { CoreQueueOptions, TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { QueueFeature } from '../core/queues/queue-feature.interface';
import { TenantQueuePlugins } from '../core/queues/tenant-queue-plugins';
import { Messages } from '../tenant-queue.messages';
import {
  FairnessQueueOptions,
  ResolvedFairnessOptions,
  fairnessOf,
  isFairnessOn,
  resolveFairnessOptions,
} from './fairness-options';
import { assertLane } from './lanes';
import { budgetKeyGroup, checkBudget, checkSameBudget } from './fair-budget';

type TenantLaneJob = PreparedJob & { opts: { lane?: string; fairKey?: string } };

/**
 * What fairness asks of every queue, also under `TenantQueueTestingModule` (no gate there): its
 * `fairness` options valid at `registerQueue`; a job's `lane` one the queue declares; a `fairKey`
 * only on a queue with `fairness.fairKey`; no `parent` (nor `deduplication`) on a fair queue (the job waits in the gate,
 * where BullMQ cannot link it to its parent); a `budget` only on fair queues, the same default cap
 * and rate limit on each of its queues.
 */
@Injectable()
export class FairQueueFeature implements QueueFeature {
  constructor(plugins: TenantQueuePlugins) {
    plugins.useQueueFeature(this);
  }

  /** The first queue registered in each budget, to check the others against. */
  private readonly budgets = new Map<string, [queue: string, options: ResolvedFairnessOptions]>();

  checkQueue(options: Readonly<CoreQueueOptions>): void {
    const fairness = (options as FairnessQueueOptions).fairness;
    const resolved = isFairnessOn(fairness)
      ? resolveFairnessOptions(options.name, fairness!)
      : undefined;
    const budget = checkBudget(options);
    if (budget === undefined || !resolved) return;
    const first = this.budgets.get(budget);
    if (!first) this.budgets.set(budget, [options.name, resolved]);
    else checkSameBudget(budget, options.name, resolved, ...first);
  }

  /** A queue of a budget takes the budget's hash tag (its pools too). */
  keyGroupOf(options: Readonly<CoreQueueOptions>): string | undefined {
    const budget = checkBudget(options);
    return budget === undefined ? undefined : budgetKeyGroup(budget);
  }

  jobCheckFor(definition: TenantQueueDefinition): (job: PreparedJob) => void {
    const fairness = fairnessOf(definition);
    const fair = isFairnessOn(fairness);
    const keyed = fair && resolveFairnessOptions(definition.name, fairness!).fairKey !== undefined;
    return (job: TenantLaneJob) => {
      if (job.opts.lane !== undefined) assertLane(definition, job.opts.lane);
      if (job.opts.fairKey !== undefined && !keyed) {
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
