import { TenantJobStage } from '../core/processor/tenant-job-stage.decorator';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { JobRunContext, JobStage } from '../core/processor/tenant-job-pipeline';
import type { FairGate, FairOutcome } from './fair-gate';

/**
 * Frees a fair job's slot as soon as its handler succeeds, before BullMQ's `moveToFinished`, so
 * the gate admits the next job while BullMQ is still recording this one. Final failures are
 * released on the worker's `failed` event (a failed attempt that will retry keeps its slot);
 * with `share: 'time'` every failed attempt is charged its run time here.
 * It wraps nothing: the runner calls `settled` / `failed` once the stages and the handler are
 * done, with the attempt's start time, so a job makes no closure or promise here.
 */
@TenantJobStage('observe', 30)
export class FairReleaseStage implements JobStage {
  private readonly gates = new WeakMap<TenantQueueDefinition, FairGate | null>();

  constructor(
    private readonly gateFor: (definition: TenantQueueDefinition) => FairGate | undefined,
  ) {}

  /** Only queues with a fair gate need it. */
  appliesTo(definition: TenantQueueDefinition): boolean {
    return this.gateOf(definition) !== null;
  }

  settled(context: JobRunContext): Promise<void> | undefined {
    const gate = this.holding(context);
    if (!gate) return undefined;
    const id = context.job.id!;
    // The job's time in its slot, for `share: 'time'` (from before the first stage).
    const runMs = gate.timeShare ? performance.now() - context.startedAt : undefined;
    // Freed only while this run still holds BullMQ's lock: one that outlived it (stalled) is
    // running again elsewhere, and that run holds the slot.
    const outcome: FairOutcome = context.token === undefined ? 'c' : `k${context.token}`;
    // A floor tenant's job: its slot waits for the tenant's next job (see releaseNow).
    if (gate.isTop(context.job)) return gate.releaseNow(id, outcome, runMs);
    gate.release(id, outcome, runMs);
    return undefined;
  }

  /**
   * `share: 'time'`: every failed attempt is charged the time it ran (retried or not; the final
   * failure is released on the worker's `failed` event).
   */
  failed(context: JobRunContext): void {
    const gate = this.holding(context);
    if (gate?.timeShare) gate.charge(context.job.id!, performance.now() - context.startedAt);
  }

  /**
   * The job's gate, when its job holds a slot there: a job that skipped the gate at its turn
   * holds none (a final failure still reaches the slow lane, by the worker's `failed` event).
   */
  private holding(context: JobRunContext): FairGate | null {
    const gate = this.gateOf(context.definition);
    return gate && !gate.holdsNoSlot(context.job) ? gate : null;
  }

  private gateOf(definition: TenantQueueDefinition): FairGate | null {
    let gate = this.gates.get(definition);
    if (gate === undefined) {
      gate = this.gateFor(definition) ?? null;
      this.gates.set(definition, gate);
    }
    return gate;
  }
}
