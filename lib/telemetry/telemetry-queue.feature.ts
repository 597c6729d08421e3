import { Inject, Injectable } from '@nestjs/common';
import { TenantQueueFeature } from '../core/queues/queue-seams.decorator';
import { JobDispatcher } from '../core/queues/job-dispatcher.interface';
import { QueueFeature } from '../core/queues/queue-feature.interface';
import { ResolvedTelemetry, TENANT_TELEMETRY } from './telemetry.options';
import { tracedDispatcher } from './traced-dispatcher';

/** With `telemetry` set: every queue's writes carry their trace context (`tracedDispatcher`). */
@Injectable()
@TenantQueueFeature(20)
export class TelemetryQueueFeature implements QueueFeature {
  constructor(
    @Inject(TENANT_TELEMETRY) private readonly telemetry: ResolvedTelemetry | undefined,
  ) {}

  wrapDispatcher(inner: JobDispatcher): JobDispatcher {
    return this.telemetry ? tracedDispatcher(inner, this.telemetry) : inner;
  }
}
