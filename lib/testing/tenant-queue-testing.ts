import { Injectable } from '@nestjs/common';
import { Backoffs } from 'bullmq';
import type { Job, JobsOptions, Processor } from 'bullmq';
import { EventEmitter } from 'node:events';
import { TenantEnvelope } from '../core/types/tenant-envelope.interface';
import { ENVELOPE_KEY } from '../tenant-queue.constants';
import { JobIdOwner } from './in-memory-job-id-owners';

/**
 * Where a job recorded by `TenantQueueTestingModule` stands.
 * @publicApi
 */
export type TestJobState = 'waiting' | 'active' | 'completed' | 'failed';

/**
 * A job as `TenantQueueTestingModule` recorded it.
 * @publicApi
 */
export interface TestJob {
  id: string;
  name: string;
  queueName: string;
  /** The payload, without `_tenant`. */
  data: Record<string, unknown>;
  /** The envelope the producer attached (undefined for a system job without a tenant). */
  tenant?: TenantEnvelope;
  /**
   * The options as a worker on a real queue reads them back (`job.opts`): the queue's defaults
   * (`attempts`, `backoff`, `defaultJobOptions`) under the caller's, the job id, and BullMQ's own
   * normalisation (`attempts` 0 when none, a numeric `backoff` as `{ type: 'fixed', delay }`).
   */
  opts: JobsOptions;
  state: TestJobState;
  result?: unknown;
  error?: unknown;
  /** BullMQ-style failure text, e.g. `[cancelled:TENANT_SUSPENDED] ...`. */
  failedReason?: string;
}

interface Consumer {
  processor: Processor;
  events: EventEmitter;
}

/**
 * The in-memory side of `TenantQueueTestingModule`: every job enqueued through a `TenantQueue` is
 * recorded here and, when a `@TenantProcessor` consumes its queue, run once, inline, through the
 * module's real job runner (fresh tenant context, envelope checks, job stages and guards).
 * @publicApi
 */
@Injectable()
export class TenantQueueTesting {
  private readonly recorded: TestJob[] = [];
  private readonly consumers = new Map<string, Consumer>();
  private readonly running = new Set<Promise<void>>();
  /** Caller-chosen job ids per queue and their owners (the Redis ledger's stand-in). */
  private readonly jobIds = new Map<string, Map<string, JobIdOwner>>();

  /** Recorded jobs, optionally of one queue, in enqueue order. */
  jobs(queueName?: string): TestJob[] {
    return queueName
      ? this.recorded.filter((job) => job.queueName === queueName)
      : [...this.recorded];
  }

  /** Waits until every job enqueued so far (and every job they enqueue) has finished. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  /** Forgets the recorded jobs and their ids (another tenant may use an id again). */
  clear(): void {
    this.recorded.length = 0;
    for (const ids of this.jobIds.values()) ids.clear();
  }

  /** @internal Whether a job of this id was recorded on the queue (since the last `clear()`). */
  has(queueName: string, id: string): boolean {
    return this.recorded.some((job) => job.queueName === queueName && job.id === id);
  }

  /** @internal The owners of a queue's caller-chosen job ids. */
  jobIdsOf(queueName: string): Map<string, JobIdOwner> {
    let ids = this.jobIds.get(queueName);
    if (!ids) this.jobIds.set(queueName, (ids = new Map()));
    return ids;
  }

  /** @internal */
  consume(queueName: string, processor: Processor, events: EventEmitter): void {
    this.consumers.set(queueName, { processor, events });
  }

  /** @internal */
  record(
    queueName: string,
    id: string,
    name: string,
    data: Record<string, unknown>,
    opts: JobsOptions,
  ): void {
    const { [ENVELOPE_KEY]: tenant, ...payload } = data;
    const record: TestJob = {
      id,
      name,
      queueName,
      data: payload,
      tenant: tenant as TenantEnvelope | undefined,
      opts: storedOptions(opts),
      state: 'waiting',
    };
    this.recorded.push(record);
    const consumer = this.consumers.get(queueName);
    if (!consumer) return;
    const run = Promise.resolve()
      .then(() => this.run(consumer, record, data))
      .finally(() => this.running.delete(run));
    this.running.add(run);
  }

  private async run(consumer: Consumer, record: TestJob, data: Record<string, unknown>) {
    const job = fakeJob(record, data);
    record.state = 'active';
    consumer.events.emit('active', job, 'waiting');
    try {
      record.result = await consumer.processor(job, 'test-token');
      record.state = 'completed';
      consumer.events.emit('completed', job, record.result, 'active');
    } catch (error) {
      record.state = 'failed';
      record.error = error;
      record.failedReason = error instanceof Error ? error.message : String(error);
      job.failedReason = record.failedReason;
      consumer.events.emit('failed', job, error, 'active');
    }
  }
}

/**
 * What BullMQ stores for an add and its worker reads back: the `Job` constructor's defaults and
 * normalisation, through JSON (an `undefined` field is gone); `repeatJobKey` is kept apart.
 */
function storedOptions(opts: JobsOptions): JobsOptions {
  const { repeatJobKey: _repeatJobKey, ...rest } = opts as JobsOptions & { repeatJobKey?: string };
  return JSON.parse(
    JSON.stringify({
      attempts: 0,
      ...rest,
      backoff: rest.backoff === undefined ? undefined : Backoffs.normalize(rest.backoff),
    }),
  ) as JobsOptions;
}

/** Just enough of a BullMQ `Job` for a processor under test; progress and logs stay in memory. */
function fakeJob(record: TestJob, data: Record<string, unknown>): Job {
  const job = {
    id: record.id,
    name: record.name,
    queueName: record.queueName,
    data: { ...data },
    opts: structuredClone(record.opts),
    attemptsMade: 0,
    attemptsStarted: 1,
    timestamp: Date.now(),
    progress: 0 as unknown,
    logs: [] as string[],
    failedReason: undefined as string | undefined,
    async updateData(next: unknown) {
      job.data = next as Record<string, unknown>;
    },
    async updateProgress(progress: unknown) {
      job.progress = progress;
    },
    async log(row: string) {
      job.logs.push(row);
      return job.logs.length;
    },
  };
  return job as unknown as Job;
}
