import { TenantJob, TenantProcessor, TenantWorkerHost } from '../../lib';
import { DigestStore } from './digest.store';

/** Runs the digests of schedules that tenants set themselves (`PUT /schedules/digest`). */
@TenantProcessor('digests')
export class DigestProcessor extends TenantWorkerHost {
  constructor(private readonly store: DigestStore) {
    super();
  }

  async process(job: TenantJob): Promise<void> {
    // The job id ends with the occurrence: sched~<tenant>~digest~yyyyMMddTHHmmssZ.
    const stamp = job.id!.slice(job.id!.lastIndexOf('~') + 1);
    const scheduledFor = `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}.000Z`;
    this.store.record({ kind: 'custom', scheduledFor });
  }
}
