import { TenantJobStage } from '../core/processor/tenant-job-stage.decorator';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { JobRunContext, JobStage } from '../core/processor/tenant-job-pipeline';
import type { FairGate } from './fair-gate';

/**
 * Frees a fair job's slot as soon as its handler succeeds, before BullMQ's `moveToFinished`, so
 * the gate admits the next job while BullMQ is still recording this one. Final failures are
 * released on the worker's `failed` event (a failed attempt that will retry keeps its slot);
 * with `share: 'time'` every failed attempt is charged its run time here.
 * Outermost stage: it sees the job's own outcome after every other stage.
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

  /** With `then` rather than `async`/`await`: one promise per job instead of two or three. */
  run(context: JobRunContext, next: () => Promise<unknown>): Promise<unknown> {
    const gate = this.gateOf(context.definition);
    if (!gate) return next();
    // A job that skipped the gate at its turn holds no slot: nothing to release on success (a
    // final failure still reaches the slow lane, by the worker's `failed` event).
    if (gate.holdsNoSlot(context.job)) return next();
    const id = context.job.id!;
    // The job's time in its slot, for `share: 'time'` (the outermost stage sees all of it).
    const start = gate.timeShare ? performance.now() : 0;
    return next().then(
      (result) => {
        const runMs = gate.timeShare ? performance.now() - start : undefined;
        // A floor tenant's job: its slot waits for the tenant's next job (see releaseNow).
        if (gate.isTop(context.job)) return gate.releaseNow(id, 'c', runMs).then(() => result);
        gate.release(id, 'c', runMs);
        return result;
      },
      (error: unknown) => {
        // `share: 'time'`: every failed attempt is charged the time it ran (retried or not; the
        // final failure is released on the worker's `failed` event).
        if (gate.timeShare) gate.charge(id, performance.now() - start);
        throw error;
      },
    );
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
