/** Releases per call, and calls in flight at once (more queue up and go in the next call). */
const RELEASE_BATCH = 1000;
const RELEASE_CALLS = 2;

/**
 * Final outcome of a job: completed, failed for good, or cancelled (not a tenant failure); `k`
 * and BullMQ's lock token: completed by the run that holds that lock (freed only while it still
 * does, fair-settle.lua); `d` and its tenant: a job that skipped the gate at its turn failed for
 * good (no slot to free, a failure for its tenant's slow lane).
 */
export type FairOutcome = 'c' | 'f' | 'x' | `k${string}` | `d${string}`;

/** What the release batching drives on its gate. */
export interface FairGateReleasesTarget {
  /** `share: 'time'`: a release carries the job's run time (triples instead of pairs). */
  timeShare: boolean;
  /** Whether the gate is closed (a live process's tick frees what is left). */
  closed(): boolean;
  /** One release script call (flat pairs, or triples with `share: 'time'`), its reply settled. */
  call(released: (string | number)[]): Promise<void>;
  /** A release call failed: its jobs' slots come back by the tick's check of BullMQ. */
  failed(error: unknown): void;
}

/**
 * A gate's releases: batched into script calls, at most `RELEASE_CALLS` in flight (each call
 * also admits the next jobs), the rest queued for the next call. The promises of the calls in
 * flight are kept for the gate's close.
 */
export class FairGateReleases {
  private pending: (string | number)[] = [];
  private inFlight = 0;
  /** A release call is due with nothing to release: a queue of the budget woke this one. */
  private kicked = false;
  private readonly calls = new Set<Promise<void>>();

  constructor(private readonly target: FairGateReleasesTarget) {}

  /** A job reached its final outcome: its slot is freed in the next call. */
  release(jobId: string, outcome: FairOutcome, runMs?: number): void {
    if (this.target.closed()) return;
    if (this.target.timeShare) this.pending.push(jobId, outcome, runMs ?? '');
    else this.pending.push(jobId, outcome);
    this.pump();
  }

  /** `share: 'time'`: a failed attempt that retries is charged its run time; its slot stays. */
  charge(jobId: string, runMs: number): void {
    if (this.target.closed() || !this.target.timeShare) return;
    this.pending.push(jobId, 'r', runMs);
    this.pump();
  }

  /** One release in a call of its own, awaited (see FairGate.releaseNow). */
  releaseNow(jobId: string, outcome: FairOutcome, runMs?: number): Promise<void> {
    if (this.target.closed()) return Promise.resolve();
    return this.send(this.target.timeShare ? [jobId, outcome, runMs ?? ''] : [jobId, outcome]);
  }

  /** A release call is due even with nothing to release (it dispatches). */
  kick(): void {
    if (this.target.closed()) return;
    this.kicked = true;
    this.pump();
  }

  /** Resolves once the calls in flight now have ended. */
  settle(): Promise<void> {
    return Promise.all([...this.calls]).then(() => undefined);
  }

  /** Whether a call is in flight. */
  busy(): boolean {
    return this.calls.size > 0;
  }

  private pump(): void {
    while (this.inFlight < RELEASE_CALLS && (this.pending.length > 0 || this.kicked)) {
      this.kicked = false;
      this.inFlight++;
      const stride = this.target.timeShare ? 3 : 2;
      void this.send(this.pending.splice(0, stride * RELEASE_BATCH)).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private send(released: (string | number)[]): Promise<void> {
    const call: Promise<void> = this.target
      .call(released)
      .catch((error) => this.target.failed(error))
      .finally(() => this.calls.delete(call));
    this.calls.add(call);
    return call;
  }
}
