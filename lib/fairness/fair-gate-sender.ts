import type { Logger } from '@nestjs/common';
import { Job, type Queue } from 'bullmq';
import type { PreparedJob } from '../core/queues/job-dispatcher.interface';
import { Messages } from '../tenant-queue.messages';

/** A job as the gate hands it to `addBulk`. */
export interface AdmittedJob {
  name: string;
  data: object;
  opts: PreparedJob['opts'];
}

/** Jobs this process enqueued and may admit itself without parsing them back (see `send`). */
const LOCAL_JOBS = 50_000;

export interface FairGateSenderDeps {
  queueName: string;
  /** Whether the queue has lanes (their priorities win over a job's own). */
  lanes: boolean;
  /** Whether the gate gives admitted jobs BullMQ priorities (lanes, priority by turn). */
  prioritized: boolean;
  bullQueue: () => Queue;
  logger: Logger;
  /** BullMQ has these jobs now: the gate acknowledges them in its next call. */
  delivered: (jobs: AdmittedJob[]) => void;
  /** BullMQ took nothing for this job (it answered with another job's id): its slot is freed. */
  dropped: (jobId: string) => void;
  /** BullMQ will never take these jobs, or their entries are unreadable (with the message):
   * the gate ends them as failed jobs. */
  refused: (refused: [AdmittedJob, string][]) => Promise<void>;
}

/**
 * The hand-over of admitted jobs to BullMQ, under their own job ids, without waiting for earlier
 * sends. Jobs this process enqueued come from a bounded local map (no JSON round trip); the
 * others are parsed from the gate's copy. A send that fails on a lost connection leaves its jobs
 * in transit: the gate's tick re-sends them.
 */
export class FairGateSender {
  private readonly sends = new Set<Promise<void>>();
  private readonly localJobs = new Map<string, AdmittedJob>();

  constructor(private readonly deps: FairGateSenderDeps) {}

  /** Jobs this process just enqueued into the gate: whatever it admits of them skips the parse. */
  remember(jobs: AdmittedJob[]): void {
    for (const job of jobs) {
      if (this.localJobs.size >= LOCAL_JOBS) {
        this.localJobs.delete(this.localJobs.keys().next().value!);
      }
      this.localJobs.set(job.opts.jobId, job);
    }
  }

  /** Resolves once the sends in flight now have ended. */
  settle(): Promise<void> {
    return Promise.all([...this.sends]).then(() => undefined);
  }

  /** Sends a script's admitted jobs, flat `{id, json, priority, ...}`. */
  send(flat: string[]): Promise<void> {
    if (!flat || flat.length === 0) return Promise.resolve();
    const jobs: AdmittedJob[] = [];
    for (let i = 0; i < flat.length; i += 3) {
      const id = flat[i];
      const priority = Number(flat[i + 2]);
      let job = this.localJobs.get(id);
      if (job) {
        this.localJobs.delete(id);
      } else {
        job = this.parse(id, flat[i + 1]);
        if (!job) continue;
      }
      // The lane's priority; the turn's, unless the job has its own (or is lifo, which BullMQ
      // refuses with a priority).
      if (priority > 0 && (this.deps.lanes || !(job.opts.priority || job.opts.lifo))) {
        job.opts.priority = priority;
      } else if (priority < 0) {
        this.top(job.opts);
      }
      jobs.push(job);
    }
    const queue = this.deps.bullQueue();
    const sent: Promise<void> = queue
      .addBulk(jobs)
      .then(
        (added) => this.deps.delivered(this.taken(jobs, added)),
        (error) => this.sendOneByOne(queue, jobs, error),
      )
      .catch((error) => {
        // Left in transit: the tick re-sends it under the same job id.
        this.deps.logger.warn(`fair send ${this.deps.queueName}: ${error}`);
      })
      .finally(() => this.sends.delete(sent));
    this.sends.add(sent);
    return sent;
  }

  /**
   * A job from the gate's copy, `{"n": name, "d": data, "o": options}`. An entry that is not
   * that (written by something else than the gate) ends as a failed job with the reason, its slot
   * freed; the other jobs of the batch go on.
   */
  private parse(id: string, json: string): AdmittedJob | undefined {
    let why: string;
    try {
      const parsed = JSON.parse(json) as { n?: unknown; d?: unknown; o?: unknown };
      if (
        typeof parsed?.n === 'string' &&
        typeof parsed.d === 'object' &&
        typeof parsed.o === 'object' &&
        parsed.o !== null
      ) {
        const opts = parsed.o as AdmittedJob['opts'];
        opts.jobId = id;
        return { name: parsed.n, data: parsed.d ?? {}, opts };
      }
      why = 'it is not {"n": name, "d": data, "o": options}';
    } catch (error) {
      why = String(error);
    }
    const unreadable: AdmittedJob = { name: '', data: {}, opts: { jobId: id } };
    void this.deps
      .refused([[unreadable, Messages.gateEntryUnreadable(this.deps.queueName, id, why)]])
      .catch((error) => this.deps.logger.warn(`fair refuse ${this.deps.queueName}: ${error}`));
    return undefined;
  }

  /**
   * The jobs BullMQ took. It answers a deduplicated add with the id of the job that holds the
   * deduplication id: such a job is dropped (its slot freed now, not when its lease ends). A
   * re-add of a finished job's id is answered with its own id: the gate's next call finds it
   * finished (see ack in fair-settle.lua).
   */
  private taken(jobs: AdmittedJob[], added: readonly Job[]): AdmittedJob[] {
    let kept: AdmittedJob[] | undefined;
    for (let i = 0; i < jobs.length; i++) {
      if (added[i]?.id === jobs[i].opts.jobId) {
        kept?.push(jobs[i]);
      } else {
        kept ??= jobs.slice(0, i);
        this.deps.dropped(jobs[i].opts.jobId);
      }
    }
    return kept ?? jobs;
  }

  /**
   * A floor tenant's job (fair-floor.lua): ahead of every other admitted job. BullMQ takes its
   * wait list (priority 0) before any prioritized job, from the head `lifo` pushes to: priority 0
   * where the gate prioritizes the others, else `lifo`.
   */
  private top(opts: AdmittedJob['opts']): void {
    if (opts.priority) opts.priority = 0;
    if (!this.deps.prioritized) opts.lifo = true;
  }

  /**
   * `addBulk` refused the batch: BullMQ's own check names the jobs it will never take, which end
   * as failed jobs with the reason (slot freed); the rest go in again. A job refused by Redis
   * itself (a script's error reply, not an outage) ends the same way; while Redis is away (see
   * `isOutage`) every job stays in transit and the tick re-sends it.
   */
  private async sendOneByOne(queue: Queue, jobs: AdmittedJob[], error: unknown): Promise<void> {
    const refused: [AdmittedJob, string][] = [];
    const rest: AdmittedJob[] = [];
    for (const job of jobs) {
      const reason = bullRefusal(queue, job);
      if (reason) refused.push([job, reason]);
      else rest.push(job);
    }
    if (!refused.length && isOutage(error)) throw error;
    const results = await Promise.allSettled(
      rest.map((job) => queue.add(job.name, job.data, job.opts)),
    );
    const added: AdmittedJob[] = [];
    results.forEach((result, i) => {
      if (result.status === 'fulfilled') added.push(...this.taken([rest[i]], [result.value]));
      else if (!isOutage(result.reason)) {
        refused.push([rest[i], String((result.reason as Error)?.message ?? result.reason)]);
      }
    });
    this.deps.delivered(added);
    if (refused.length) {
      await this.deps.refused(
        refused.map(([job, reason]) => [
          job,
          Messages.admissionRefused(this.deps.queueName, job.opts.jobId, reason),
        ]),
      );
    }
  }
}

/** What BullMQ's own option check says of a job, without Redis (undefined when it passes). */
function bullRefusal(queue: Queue, job: AdmittedJob): string | undefined {
  try {
    const probe = new Job(queue, job.name, job.data, job.opts, job.opts.jobId);
    (probe as unknown as { validateOptions(json: unknown): void }).validateOptions(probe.asJSON());
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Error replies of a Redis that is loading, failing over or busy: it will take the job later. */
const TRANSIENT_REPLY =
  /^(LOADING|READONLY|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|NOREPLICAS|MOVED|ASK)\b/;

/**
 * Whether a failed send says Redis was away rather than that BullMQ refused the job: an outage is
 * never a refusal. Redis's own refusal is an error reply (ioredis `ReplyError`); an outage is a
 * transient reply or one of ioredis' connection errors: the socket lost or refused ("Connection
 * is closed", "Stream isn't writeable and enableOfflineQueue options is false", ECONNRESET, ...),
 * a command aborted or out of retries.
 */
export function isOutage(error: unknown): boolean {
  const { name, message } = (error ?? {}) as { name?: string; message?: string };
  const text = String(message ?? error);
  if (name === 'ReplyError') return TRANSIENT_REPLY.test(text);
  if (name === 'MaxRetriesPerRequestError' || name === 'AbortError') return true;
  return /connection|stream isn't writeable|offline ?queue|socket|ECONN|ETIMEDOUT|EPIPE|ENOTCONN|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|closed|max ?retries|aborted|timed? ?out|LOADING|READONLY/i.test(
    text,
  );
}
