import { Injectable } from '@nestjs/common';
import { InvalidTenantQueueOptionsError } from '../core/errors';
import { QueueFeature, QueueOptionsSlice } from '../core/queues/queue-feature.interface';
import { TenantQueueFeature } from '../core/queues/queue-seams.decorator';
import { Messages } from '../tenant-queue.messages';
import { DeadLetterQueueOptions } from './dead-letter-queue-options.interface';

/** The `deadLetterCap` of each queue, checked as it registers. */
export const deadLetterQueueOptions: QueueOptionsSlice = {
  checkQueue(options) {
    const cap = (options as DeadLetterQueueOptions).deadLetterCap;
    // 0 or less kept no letter at all (each was dropped as it was written); NaN or 1.5 none dropped.
    if (cap !== undefined && (!Number.isSafeInteger(cap) || cap < 1)) {
      throw new InvalidTenantQueueOptionsError(
        Messages.invalidOptions(
          `registerQueue(${options.name}).deadLetterCap`,
          'must be an integer >= 1',
        ),
      );
    }
  },
};

/** Dead letters add no job check and no dispatcher: only their slice of the queue options. */
@Injectable()
@TenantQueueFeature(30, deadLetterQueueOptions)
export class DeadLetterQueueFeature implements QueueFeature {}
