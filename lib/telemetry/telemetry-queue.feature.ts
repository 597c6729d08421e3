import { Inject, Injectable } from '@nestjs/common';
import { TenantQueuePlugins } from '../core/queues/tenant-queue-plugins';
import { JobDispatcher } from '../core/queues/job-dispatcher.interface';
import { QueueFeature } from '../core/queues/queue-feature.interface';
import { ResolvedTelemetry, TENANT_TELEMETRY } from './telemetry.options';
import { tracedDispatcher } from './traced-dispatcher';

/** With `telemetry` set: every queue's writes carry their trace context (`tracedDispatcher`). */
@Injectable()
export class TelemetryQueueFeature implements QueueFeature {
  constructor(
    plugins: TenantQueuePlugins,
    @Inject(TENANT_TELEMETRY) private readonly telemetry: ResolvedTelemetry | undefined,
  ) {
    if (telemetry) plugins.useQueueFeature(this);
  }

  wrapDispatcher(inner: JobDispatcher): JobDispatcher {
    return tracedDispatcher(inner, this.telemetry);
  }
}
