import { InvalidLaneError } from '../../errors';
import { TenantQueueDefinition } from '../../../core/types/queue-definition.interface';
import { Messages } from '../../../tenant-queue.messages';
import { fairnessOf, isFairnessOn, resolveFairnessOptions } from '../../fairness-options';

const lanesOf = new WeakMap<TenantQueueDefinition, string[]>();

/**
 * Refuses a job option `lane` that the queue does not declare, before anything is written (also
 * under `TenantQueueTestingModule`, where no fair gate runs).
 */
export function assertLane(definition: TenantQueueDefinition, lane: string): void {
  let lanes = lanesOf.get(definition);
  if (!lanes) {
    const fairness = fairnessOf(definition);
    lanes = isFairnessOn(fairness)
      ? resolveFairnessOptions(definition.name, fairness!).lanes.map((l) => l.name)
      : [];
    lanesOf.set(definition, lanes);
  }
  if (!lanes.length) throw new InvalidLaneError(Messages.noLanes(definition.name));
  if (!lanes.includes(lane)) {
    throw new InvalidLaneError(Messages.unknownLane(definition.name, lane, lanes));
  }
}
