import { Injectable } from '@nestjs/common';
import { TenantCron, TenantCronRun } from '../../lib';
import { DigestStore } from './digest.store';

@Injectable()
export class DigestService {
  constructor(private readonly store: DigestStore) {}

  /** Every tenant gets a digest at 09:00 in its own time zone (from the TenantDirectory). */
  @TenantCron('0 9 * * *', { name: 'nightly-digest', timezone: 'tenant', missed: 'once' })
  async nightly(run: TenantCronRun): Promise<void> {
    this.store.record({ kind: 'nightly', scheduledFor: run.occurrence.toISOString() });
  }
}
