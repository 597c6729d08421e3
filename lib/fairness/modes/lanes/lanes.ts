import { InvalidLaneError } from '../../errors';
import { TenantQueueDefinition } from '../../../core/types/queue-definition.interface';
import { Messages } from '../../../tenant-queue.messages';
import { resolvedFairnessOf } from '../../fairness-options';

/**
 * Refuses a job option `lane` that the queue does not declare, before anything is written (also
 * under `TenantQueueTestingModule`, where no fair gate runs).
 */
export function assertLane(definition: TenantQueueDefinition, lane: string): void {
  const lanes = (resolvedFairnessOf(definition.registered)?.lanes ?? []).map((l) => l.name);
  if (!lanes.length) throw new InvalidLaneError(Messages.noLanes(definition.name));
  if (!lanes.includes(lane)) {
    throw new InvalidLaneError(Messages.unknownLane(definition.name, lane, lanes));
  }
}
