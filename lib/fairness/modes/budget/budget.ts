import { InvalidTenantQueueOptionsError } from '../../../core/errors';
import { QUEUE_NAME_RULE, isQueueName } from '../../../core/queues/queue-names';
import {
  CoreQueueOptions,
  TenantQueueDefinition,
} from '../../../core/types/queue-definition.interface';
import { Messages } from '../../../tenant-queue.messages';
import {
  FairnessQueueOptions,
  ResolvedFairnessOptions,
  isFairnessOn,
} from '../../fairness-options';
import { encodeRate } from '../rate-limit/rate';

/** The key group of a budget's queues: their hash tag is `{<prefix>:~budget:<budget>}`. */
export function budgetKeyGroup(budget: string): string {
  return `~budget:${budget}`;
}

/**
 * Base of the budget's shared keys (see fair-budget.lua) for a queue (or pool) of a budget:
 * `{<prefix>:~budget:<budget>}:~budget`, the hash tag `bullPrefixFor` wrote before `:<queue>`.
 */
export function budgetBaseOf(definition: TenantQueueDefinition): string | undefined {
  if (budgetOf(definition) === undefined) return undefined;
  return `${definition.bullPrefix.slice(0, -(definition.name.length + 1))}:~budget`;
}

/** A queue's `budget` as registered (a pool shares its queue's). */
export function budgetOf(definition: TenantQueueDefinition): string | undefined {
  return (definition.registered as FairnessQueueOptions).budget;
}

/** Checks `registerQueue`'s `budget`: a queue-like name, on a fair queue; typed errors. */
export function checkBudget(options: Readonly<CoreQueueOptions>): string | undefined {
  const { budget, fairness } = options as FairnessQueueOptions;
  if (budget === undefined) return undefined;
  if (!isQueueName(budget)) {
    throw new InvalidTenantQueueOptionsError(
      Messages.invalidOptions(`registerQueue(${options.name}).budget`, QUEUE_NAME_RULE),
    );
  }
  if (!isFairnessOn(fairness)) {
    throw new InvalidTenantQueueOptionsError(Messages.budgetNeedsFairness(options.name, budget));
  }
  return budget;
}

/** The queues of one budget need one default cap and one default rate limit (typed error). */
export function checkSameBudget(
  budget: string,
  queue: string,
  options: ResolvedFairnessOptions,
  other: string,
  otherOptions: ResolvedFairnessOptions,
): void {
  const rate = (o: ResolvedFairnessOptions) => (o.rateLimit ? encodeRate(o.rateLimit) : '');
  const field =
    options.defaultConcurrency !== otherOptions.defaultConcurrency
      ? 'defaultConcurrency'
      : rate(options) !== rate(otherOptions)
        ? 'rateLimit'
        : undefined;
  if (field) {
    throw new InvalidTenantQueueOptionsError(Messages.budgetMismatch(budget, field, queue, other));
  }
}
