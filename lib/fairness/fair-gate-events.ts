import type { Logger } from '@nestjs/common';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import { Messages } from '../tenant-queue.messages';
import type { ResolvedFairnessOptions } from './fairness-options';
import type { SlowLaneEvent } from './slow-lane-event.interface';

/** How often the gate warns that the floors were held to their bound (see fair-dispatch.lua). */
const FLOORS_WARN_MS = 60_000;

/**
 * What a gate's script calls report besides admitting jobs: a tenant entering or leaving the
 * slow lane (logged and handed to `onSlowLane`), the floors held to their bound (a warning at
 * most once a minute). Flat triples `{event, tenant, count, ...}` as the scripts return them.
 */
export class FairGateEvents {
  private floorsWarnedAt = -Infinity;

  constructor(
    private readonly queue: string,
    private readonly options: ResolvedFairnessOptions,
    private readonly onSlowLane: (event: SlowLaneEvent) => void,
    private readonly logger: Logger,
  ) {}

  emit(events: (string | number)[]): void {
    for (let i = 0; i + 2 < events.length; i += 3) {
      if (events[i] === 'floors') {
        this.warnFloorsBounded(Number(events[i + 2]));
        continue;
      }
      const event: SlowLaneEvent = {
        queue: this.queue,
        tenantId: String(events[i + 1]),
        failures: Number(events[i + 2]),
        state: events[i] === 'enter' ? 'entered' : 'left',
      };
      const log =
        event.state === 'entered'
          ? Messages.slowLaneEnter(event.queue, event.tenantId, event.failures)
          : Messages.slowLaneLeave(event.queue, event.tenantId, event.failures);
      this.logger.warn(`${tenantLogFields()} ${log}`);
      this.onSlowLane(event);
    }
  }

  /**
   * The floors of the tenants with work wanted more slots than BullMQ may hold beyond the window
   * (the workers' slots): the gate admitted up to that bound and `below` floor tenants wait.
   */
  private warnFloorsBounded(below: number): void {
    const now = Date.now();
    if (now - this.floorsWarnedAt < FLOORS_WARN_MS) return;
    this.floorsWarnedAt = now;
    this.logger.warn(
      `${tenantLogFields()} ${Messages.floorsBounded(this.queue, below, this.options.defaultMinConcurrency)}`,
    );
  }
}
