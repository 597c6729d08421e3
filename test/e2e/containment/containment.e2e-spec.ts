import { Injectable, Logger, Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { DelayedError, UnrecoverableError, Worker } from 'bullmq';
import {
  DeadLetter,
  DeadLetterNotFoundError,
  DeadLetters,
  InMemoryTenantDirectory,
  InjectTenantQueue,
  JobCancellations,
  InvalidDeadLetterQueryError,
  InvalidJobIdError,
  JobCancelledError,
  JobCancelledEvent,
  NonRetryableError,
  TenantContext,
  TenantJob,
  TenantNotActiveError,
  TenantPortUnavailableError,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
  parseCancelReason,
  runIdentity,
  tenantLogFields,
  withRunOptions,
} from '../../../lib';
import { DeadLetterWorkerPlugin } from '../../../lib/dead-letters/dead-letter.plugin';
import { ClsService } from 'nestjs-cls';
import { FlakyTenantDirectory } from '../../support/guard-fixtures';
import { redisConnection, uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

/** What the app's `cls.setup` writes for a job (read back in a dead-letter alert). */
const CLS_SETUP_KEY = 'containment-setup';

jest.setTimeout(30_000);

type Payload = { label: string; fail?: boolean };

/** What the handlers saw, per job label. */
const runs = new Map<string, { tenant?: string; runId?: string; aborted?: boolean }[]>();
const seen = (label: string) => runs.get(label) ?? [];
const finished: { label: string; tenant?: string; at: number }[] = [];
let replayFixed = false;

function note(label: string, entry: { tenant?: string; runId?: string; aborted?: boolean }) {
  runs.set(label, [...seen(label), entry]);
}

/** An application's own error class whose name happens to be one BullMQ gives a meaning. */
class WaitingError extends Error {
  override name = 'WaitingError';
}

/** An Error one of whose fields BullMQ reads throws when read. */
function unreadable(field: 'message' | 'stack'): Error {
  const error = new Error('readable at first');
  Object.defineProperty(error, field, {
    get() {
      throw new Error(`the ${field} getter threw`);
    },
  });
  return error;
}

@TenantProcessor('faults', { concurrency: 8, timeoutMs: 150 })
class FaultsProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob<Payload>, token?: string, signal?: AbortSignal) {
    const entry = { tenant: this.tenant.tenantId, runId: job.runId, aborted: false };
    note(job.data.label, entry);
    switch (job.name) {
      case 'hang':
        return new Promise(() => undefined);
      case 'polite':
        return new Promise((_, reject) =>
          signal?.addEventListener('abort', () => {
            entry.aborted = true;
            reject(signal.reason);
          }),
        );
      case 'slow':
        await sleep(400);
        return 'slow-done';
      case 'throw-string':
        throw 'boom';
      case 'throw-undefined':
        throw undefined;
      case 'throw-object':
        throw { code: 42 };
      case 'throw-symbol':
        throw Symbol('boom');
      case 'throw-bad-message':
        throw unreadable('message');
      case 'throw-bad-stack':
        throw unreadable('stack');
      case 'throw-empty':
        throw new TypeError();
      case 'non-retryable-empty':
        throw new NonRetryableError('');
      case 'throw-number-message':
        throw Object.assign(new Error(), { message: 42 });
      case 'named-waiting':
        throw new WaitingError('the upstream kept us waiting');
      case 'named-delayed':
        throw new (class DelayedError extends Error {
          override name = 'DelayedError';
        })('the upstream is delayed');
      case 'delay-once':
        if (seen(job.data.label).length > 1) return 'after the delay';
        await job.moveToDelayed(Date.now() + 50, token);
        throw new DelayedError();
      case 'huge-message':
        throw new NonRetryableError('x'.repeat(2_000_000));
      case 'non-retryable':
        throw new NonRetryableError('bad input, retrying will not help');
      case 'unrecoverable':
        throw new UnrecoverableError('gone for good');
      case 'bigint-result':
        return { total: 10n };
      case 'cancel':
        throw new JobCancelledError('TENANT_SUSPENDED', 'tenant suspended');
      case 'cancel-lookalike':
        throw new Error('[cancelled:TENANT_SUSPENDED] as an upstream service worded it');
      case 'cancel-lookalike-final':
        throw new NonRetryableError('[cancelled:over-quota] as an upstream service worded it');
      case 'timeout-lookalike':
        throw new Error('[TIMEOUT] as an upstream service worded it');
      case 'stall-lookalike':
        throw new NonRetryableError('job stalled more than allowable limit');
      case 'cancel-own':
        throw new JobCancelledError('over-quota', 'over the plan this month');
      case 'flaky':
        if (seen(job.data.label).length < 3) throw new Error('flaky failure');
        return 'third time lucky';
      case 'until-fixed':
        if (!replayFixed) throw new Error('not fixed yet');
        return { tenant: this.tenant.tenantId, identity: runIdentity(job) };
    }
    return 'ok';
  }
}

@TenantProcessor('mixed', { concurrency: 2, timeoutMs: 200 })
class MixedProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob<Payload>) {
    note(job.data.label, { tenant: this.tenant.tenantId });
    if (job.data.fail) return new Promise(() => undefined);
    finished.push({ label: job.data.label, tenant: this.tenant.tenantId, at: Date.now() });
    return 'ok';
  }
}

@Injectable()
class Producer {
  constructor(
    @InjectTenantQueue('faults') readonly faults: TenantQueue<Payload>,
    @InjectTenantQueue('mixed') readonly mixed: TenantQueue<Payload>,
    @InjectTenantQueue('defaults') readonly defaults: TenantQueue<Payload>,
    @InjectTenantQueue('orphan') readonly orphan: TenantQueue<Payload>,
    readonly tenant: TenantContext,
  ) {}

  add(tenantId: string, queue: 'faults' | 'mixed' | 'orphan', name: string, data: Payload) {
    return this.tenant.run(tenantId, () => this[queue].add(name, data));
  }
}

const directory = new FlakyTenantDirectory(
  new InMemoryTenantDirectory([{ id: 'acme' }, { id: 'globex' }]),
);

describe('failure containment', () => {
  let app: TestingModule;
  let producer: Producer;
  let deadLetters: DeadLetters;
  let registry: TenantQueueRegistry;
  const alerts: {
    letter: DeadLetter;
    contextTenant?: string;
    logFields: string;
    clsSetup: unknown;
    clsId: string | undefined;
  }[] = [];
  let prefix: string;

  beforeAll(async () => {
    prefix = uniquePrefix('dlq');
    @Module({
      imports: [
        ...testRootImports(prefix, {
          directory: { useValue: directory },
          guards: { portTimeoutMs: 300 },
          // What the app's code reads from CLS in a job, a worker event and a dead-letter alert.
          cls: { setup: (cls, job) => cls.set(CLS_SETUP_KEY, `set up for ${job.id}`) },
        }),
        TenantQueueModule.registerQueue(
          { name: 'faults', attempts: 3, backoff: { type: 'fixed', delay: 50 } },
          { name: 'mixed', attempts: 2, backoff: { type: 'fixed', delay: 5_000 } },
          { name: 'defaults' },
          { name: 'orphan', attempts: 1 },
        ),
      ],
      providers: [FaultsProcessor, MixedProcessor, Producer],
    })
    class AppModule {}
    app = await bootTestModule({ imports: [AppModule] });
    producer = app.get(Producer);
    deadLetters = app.get(DeadLetters);
    registry = app.get(TenantQueueRegistry);
    const context = app.get(TenantContext);
    const cls = app.get(ClsService);
    deadLetters.onDeadLetter((letter) => {
      alerts.push({
        letter,
        contextTenant: context.tenantId,
        logFields: tenantLogFields(),
        clsSetup: cls.get(CLS_SETUP_KEY),
        clsId: cls.getId(),
      });
    });
  });

  afterAll(async () => {
    await app?.close();
  });

  const letterOf = async (tenantId: string, jobId: string) =>
    (await deadLetters.list(tenantId, { limit: 100 })).items.find((l) => l.jobId === jobId);
  const waitForLetter = async (tenantId: string, jobId: string) => {
    let letter: DeadLetter | undefined;
    await waitFor(async () => !!(letter = await letterOf(tenantId, jobId)), `dead letter ${jobId}`);
    return letter!;
  };

  it('fails a hanging attempt with TIMEOUT, retries it, then dead-letters it', async () => {
    const job = await producer.add('acme', 'faults', 'hang', { label: 'hang' });
    const letter = await waitForLetter('acme', job.id);
    expect(seen('hang')).toHaveLength(3);
    expect(letter).toMatchObject({
      jobId: job.id,
      queue: 'faults',
      name: 'hang',
      tenantId: 'acme',
      runId: job.id,
      reason: 'TIMEOUT',
      attempts: 3,
      data: { label: 'hang' },
      envelope: { tenantId: 'acme' },
    });
    expect(letter.failedReason).toMatch(/^\[TIMEOUT\] .*150 ms/);
    expect(letter.stack).toContain('JobTimeoutError');
    const alert = alerts.filter((a) => a.letter.jobId === job.id);
    expect(alert).toHaveLength(1);
    expect(alert[0].contextTenant).toBe('acme');
    // Its log fields name the dead-lettered job, as a JobCancellations listener's name the
    // cancelled one (a user's alert logs `${tenantLogFields()} ...`).
    expect(alert[0].logFields).toBe(
      `tenant=acme job=${job.id} correlation=${letter.envelope.correlationId}`,
    );
    // And the app's nestjs-cls setup ran for it, as for the job's @OnTenantWorkerEvent listeners.
    expect(alert[0].clsSetup).toBe(`set up for ${job.id}`);
    expect(alert[0].clsId).toBe(letter.envelope.correlationId);
  });

  it('aborts the signal a handler receives at the deadline', async () => {
    const job = await producer.add('acme', 'faults', 'polite', { label: 'polite' });
    await waitForLetter('acme', job.id);
    expect(seen('polite').map((r) => r.aborted)).toEqual([true, true, true]);
  });

  it('lets a job carry its own timeout', async () => {
    const job = await producer.tenant.run('acme', () =>
      producer.faults.add('slow', withRunOptions({ label: 'slow' }, { timeoutMs: 3_000 })),
    );
    const bull = registry.getQueue('faults').bullQueue;
    await waitFor(async () => (await bull.getJobState(job.id)) === 'completed', 'slow job');
    expect(seen('slow')).toHaveLength(1);
    expect((await bull.getJob(job.id))?.data).toEqual({
      label: 'slow',
      _tenant: expect.any(Object),
      _run: { timeoutMs: 3_000 },
    });
  });

  it.each([
    ['throw-string', 'string "boom"', /"boom"/],
    ['throw-undefined', 'undefined', /\(undefined\)/],
    ['throw-object', 'an object', /\{"code":42\}/],
    ['throw-symbol', 'a symbol', /\(symbol Symbol\(boom\)\)/],
  ])('records a readable reason when a handler throws %s, then retries', async (name, _, re) => {
    const job = await producer.add('acme', 'faults', name, { label: name });
    const letter = await waitForLetter('acme', job.id);
    expect(seen(name)).toHaveLength(3);
    expect(letter.reason).toBe('ATTEMPTS_EXHAUSTED');
    expect(letter.attempts).toBe(3);
    expect(letter.failedReason).toMatch(/threw a non-Error value/);
    expect(letter.failedReason).toMatch(re);
  });

  // BullMQ reads `message`, `name` and `stack` to fail an attempt: a getter that threw there left
  // the job active, unlocked, until the stalled check ran it again (60 s each, then STALLED).
  it.each(['message', 'stack'])(
    'fails, retries and dead-letters an Error whose %s cannot be read, saying so',
    async (field) => {
      const name = `throw-bad-${field}`;
      const job = await producer.add('acme', 'faults', name, { label: name });
      const letter = await waitForLetter('acme', job.id);
      expect(seen(name)).toHaveLength(3);
      expect(letter).toMatchObject({ reason: 'ATTEMPTS_EXHAUSTED', attempts: 3 });
      expect(letter.failedReason).toContain(`the ${field} getter threw`);
    },
  );

  // An Error without a message: the failed job and its dead letter had no reason at all.
  it('gives an Error with an empty message a reason that says so, retried as usual', async () => {
    const job = await producer.add('acme', 'faults', 'throw-empty', { label: 'throw-empty' });
    const letter = await waitForLetter('acme', job.id);
    expect(seen('throw-empty')).toHaveLength(3);
    expect(letter).toMatchObject({ reason: 'ATTEMPTS_EXHAUSTED', attempts: 3 });
    expect(letter.failedReason).toContain('threw "TypeError" with an empty message');
    expect(letter.stack).toMatch(/^TypeError/);
    const failed = await registry.getQueue('faults').bullQueue.getJob(job.id);
    expect(failed?.failedReason).toContain('with an empty message');
    const final = await producer.add('acme', 'faults', 'non-retryable-empty', { label: 'nre' });
    const finalLetter = await waitForLetter('acme', final.id);
    expect(seen('nre')).toHaveLength(1);
    expect(finalLetter).toMatchObject({ reason: 'NON_RETRYABLE', attempts: 1 });
    expect(finalLetter.failedReason).toContain('threw "NonRetryableError" with an empty message');
  });

  // BullMQ kept the number as the job's failedReason, on which the dead-letter recorder threw:
  // the letter waited for the next sweep (up to 30 s), with an error logged.
  it('dead-letters at once an Error whose message is not a string, saying so', async () => {
    const job = await producer.add('acme', 'faults', 'throw-number-message', { label: 'n' });
    const letter = await waitForLetter('acme', job.id);
    expect(letter).toMatchObject({ reason: 'ATTEMPTS_EXHAUSTED', attempts: 3 });
    expect(letter.failedReason).toContain('its message is not a string (number)');
  });

  // deadLetterCap bounds a tenant's letters by count: a letter kept a 2 MB message twice (reason
  // and stack), so a tenant's 1,000 letters of such errors could hold 4 GB of Redis.
  it("keeps a bounded part of a huge error's message and stack in its dead letter", async () => {
    const job = await producer.add('acme', 'faults', 'huge-message', { label: 'huge' });
    const letter = await waitForLetter('acme', job.id);
    expect(letter.failedReason.length).toBeLessThan(20_000);
    expect(letter.failedReason).toMatch(/^x{16384}… \[1983616 more characters\]$/);
    expect(letter.stack!.length).toBeLessThan(20_000);
    expect(letter.stack).toMatch(/^NonRetryableError: x+… \[\d+ more characters\]$/);
    const failed = await registry.getQueue('faults').bullQueue.getJob(job.id);
    expect(failed?.failedReason).toHaveLength(2_000_000);
  });

  // BullMQ takes an error named DelayedError / WaitingError / WaitingChildrenError to mean the
  // handler moved the job itself, and leaves it: it stayed active until the stalled check (60 s
  // an attempt by default), ran again, then failed STALLED, its fair slot held all along.
  it.each(['named-waiting', 'named-delayed'])(
    "fails, retries and dead-letters an application's error named like BullMQ's own (%s)",
    async (name) => {
      const job = await producer.add('acme', 'faults', name, { label: name });
      const letter = await waitForLetter('acme', job.id);
      expect(seen(name)).toHaveLength(3);
      expect(letter).toMatchObject({ reason: 'ATTEMPTS_EXHAUSTED', attempts: 3 });
      expect(letter.failedReason).toMatch(/the upstream (kept us waiting|is delayed)/);
    },
  );

  it('still lets a handler move its job to delayed itself and throw DelayedError', async () => {
    const job = await producer.add('acme', 'faults', 'delay-once', { label: 'delay-once' });
    const bull = registry.getQueue('faults').bullQueue;
    await waitFor(async () => (await bull.getJobState(job.id)) === 'completed', 'delayed job');
    expect(seen('delay-once')).toHaveLength(2);
    expect((await bull.getJob(job.id))?.returnvalue).toBe('after the delay');
  });

  it('skips the remaining attempts of a non-retryable error', async () => {
    const job = await producer.add('acme', 'faults', 'non-retryable', { label: 'nr' });
    const letter = await waitForLetter('acme', job.id);
    expect(seen('nr')).toHaveLength(1);
    expect(letter).toMatchObject({ reason: 'NON_RETRYABLE', attempts: 1 });
    expect(letter.failedReason).toBe('bad input, retrying will not help');
  });

  // BullMQ cannot store such a result once the handler has run: retrying ran the handler again
  // on every attempt (and freed a fair slot per run), with "Do not know how to serialize a BigInt"
  // logged at ERROR without the job.
  it('fails a job whose result JSON cannot hold once, non-retryable, saying what to return', async () => {
    const logged: string[] = [];
    const spies = [
      jest
        .spyOn(Logger.prototype, 'error')
        .mockImplementation((message: unknown) => void logged.push(`error ${String(message)}`)),
      jest
        .spyOn(Logger.prototype, 'warn')
        .mockImplementation((message: unknown) => void logged.push(`warn ${String(message)}`)),
    ];
    try {
      const job = await producer.add('acme', 'faults', 'bigint-result', { label: 'bigint' });
      const letter = await waitForLetter('acme', job.id);
      expect(seen('bigint')).toHaveLength(1);
      expect(letter).toMatchObject({ reason: 'NON_RETRYABLE', attempts: 1 });
      expect(letter.failedReason).toBe(
        'Job "bigint-result" on queue "faults" returned a value BullMQ cannot store as JSON ' +
          '(Do not know how to serialize a BigInt). The handler ran, so the job is not retried. ' +
          'Return plain JSON data (no BigInt, no cycles), e.g. a BigInt as a string.',
      );
      // BullMQ's own 'error' for the result (no job in it) is not logged: the job's line says it.
      await sleep(50);
      expect(logged.filter((line) => line.includes(job.id))).toEqual([
        expect.stringMatching(/^warn .*dead-lettered: NON_RETRYABLE after 1 attempt/),
      ]);
      expect(logged.filter((line) => line.includes('serialize a BigInt'))).toEqual([]);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  // On its last allowed attempt too: it was reported as ATTEMPTS_EXHAUSTED there.
  it.each(['non-retryable', 'unrecoverable'])(
    'a %s error on the last allowed attempt is NON_RETRYABLE',
    async (name) => {
      const job = await producer.tenant.run('acme', () =>
        producer.faults.add(name, { label: `last-${name}` }, { attempts: 1 }),
      );
      const letter = await waitForLetter('acme', job.id);
      expect(letter).toMatchObject({ reason: 'NON_RETRYABLE', attempts: 1 });
    },
  );

  it('retries with backoff until an attempt succeeds, and keeps the run id', async () => {
    const job = await producer.add('acme', 'faults', 'flaky', { label: 'flaky' });
    const bull = registry.getQueue('faults').bullQueue;
    await waitFor(async () => (await bull.getJobState(job.id)) === 'completed', 'flaky job');
    expect((await bull.getJob(job.id))?.returnvalue).toBe('third time lucky');
    expect(seen('flaky').map((r) => r.runId)).toEqual([job.id, job.id, job.id]);
    expect(await letterOf('acme', job.id)).toBeUndefined();
  });

  it('gives every queue bounded attempts with exponential, jittered backoff by default', async () => {
    const job = await producer.tenant.run('acme', () => producer.defaults.add('x', { label: 'd' }));
    const stored = await registry.getQueue('defaults').bullQueue.getJob(job.id);
    expect(stored?.opts.attempts).toBe(3);
    expect(stored?.opts.backoff).toEqual({ type: 'exponential', delay: 1000, jitter: 0.5 });
  });

  it('keeps cancelled jobs out of the dead letters', async () => {
    const job = await producer.add('acme', 'faults', 'cancel', { label: 'cancel' });
    const bull = registry.getQueue('faults').bullQueue;
    await waitFor(async () => (await bull.getJobState(job.id)) === 'failed', 'cancelled job');
    await app.get(DeadLetterWorkerPlugin).sweep(registry.getQueue('faults').definition);
    expect((await bull.getJob(job.id))?.failedReason).toMatch(/^\[cancelled:TENANT_SUSPENDED\]/);
    expect(await letterOf('acme', job.id)).toBeUndefined();
  });

  it('cancels with your own reason: one attempt, no dead letter, parseCancelReason reads it', async () => {
    const events: JobCancelledEvent[] = [];
    const unsubscribe = app.get(JobCancellations).onCancelled((event) => events.push(event));
    const job = await producer.add('acme', 'faults', 'cancel-own', { label: 'cancel-own' });
    const bull = registry.getQueue('faults').bullQueue;
    await waitFor(async () => (await bull.getJobState(job.id)) === 'failed', 'cancelled job');
    await waitFor(() => events.some((event) => event.jobId === job.id), 'the cancellation event');
    unsubscribe();
    // The event's message is the failedReason without its prefix, for a reason of your own too
    // (lower case, digits, '-' or '.'), not only for the module's upper-case ones.
    expect(events.find((event) => event.jobId === job.id)).toMatchObject({
      reason: 'over-quota',
      message: 'over the plan this month',
      tenantId: 'acme',
    });
    await app.get(DeadLetterWorkerPlugin).sweep(registry.getQueue('faults').definition);
    const failed = await bull.getJob(job.id);
    expect(parseCancelReason(failed?.failedReason)).toBe('over-quota');
    expect(failed?.attemptsMade).toBe(1);
    expect(seen('cancel-own')).toHaveLength(1);
    expect(await letterOf('acme', job.id)).toBeUndefined();
  });

  it('logs an async onCancelled listener that rejects, as one that throws: no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const errors: string[] = [];
    const spy = jest
      .spyOn(Logger.prototype, 'error')
      .mockImplementation((message: unknown) => void errors.push(String(message)));
    const seenBy: string[] = [];
    const cancellations = app.get(JobCancellations);
    const stops = [
      cancellations.onCancelled(async (event) => {
        await sleep(1);
        throw new Error(`alerting is down for ${event.jobId}`);
      }),
      cancellations.onCancelled((event) => void seenBy.push(event.jobId!)),
    ];
    try {
      const job = await producer.add('acme', 'faults', 'cancel-own', { label: 'cancel-async' });
      await waitFor(
        () => errors.some((line) => line.includes(`alerting is down for ${job.id}`)),
        'the listener error logged',
      );
      // Another turn for an unhandled rejection to surface.
      await sleep(50);
      expect(unhandled).toEqual([]);
      expect(seenBy).toContain(job.id);
      expect(errors.find((line) => line.includes(`alerting is down for ${job.id}`))).toMatch(
        new RegExp(`^tenant=acme job=${job.id} .*JobCancellations listener threw`),
      );
    } finally {
      for (const stop of stops) stop();
      spy.mockRestore();
      process.off('unhandledRejection', onUnhandled);
    }
  });

  // Only JobCancelledError cancels: an Error whose message merely starts like a cancellation was
  // retried, then read back as cancelled (no dead letter, a cancellation event per attempt).
  it('dead-letters an error whose message only looks like a cancellation', async () => {
    const events: JobCancelledEvent[] = [];
    const unsubscribe = app.get(JobCancellations).onCancelled((event) => events.push(event));
    const job = await producer.add('acme', 'faults', 'cancel-lookalike', { label: 'lookalike' });
    const letter = await waitForLetter('acme', job.id);
    expect(seen('lookalike')).toHaveLength(3);
    expect(letter).toMatchObject({ reason: 'ATTEMPTS_EXHAUSTED', attempts: 3 });
    expect(letter.failedReason).toContain('as an upstream service worded it');
    expect(parseCancelReason(letter.failedReason)).toBeUndefined();
    const final = await producer.add('acme', 'faults', 'cancel-lookalike-final', {
      label: 'lookalike-final',
    });
    const finalLetter = await waitForLetter('acme', final.id);
    expect(finalLetter).toMatchObject({ reason: 'NON_RETRYABLE', attempts: 1 });
    expect(parseCancelReason(finalLetter.failedReason)).toBeUndefined();
    unsubscribe();
    expect(events.filter((event) => [job.id, final.id].includes(event.jobId!))).toEqual([]);
  });

  // Only the module's own timeout, and BullMQ's own stall, label a dead letter TIMEOUT or STALLED.
  it("dead-letters a message that only looks like a timeout or a stall under the handler's reason", async () => {
    const timeout = await producer.add('acme', 'faults', 'timeout-lookalike', { label: 'tlike' });
    const stall = await producer.add('acme', 'faults', 'stall-lookalike', { label: 'slike' });
    const [timeoutLetter, stallLetter] = await Promise.all([
      waitForLetter('acme', timeout.id),
      waitForLetter('acme', stall.id),
    ]);
    expect(seen('tlike')).toHaveLength(3);
    expect(timeoutLetter).toMatchObject({ reason: 'ATTEMPTS_EXHAUSTED', attempts: 3 });
    expect(timeoutLetter.failedReason).toContain('[TIMEOUT] as an upstream service worded it');
    expect(timeoutLetter.failedReason.startsWith('[TIMEOUT]')).toBe(false);
    expect(stallLetter).toMatchObject({ reason: 'NON_RETRYABLE', attempts: 1 });
  });

  it('refuses a bad page or an empty job id with a typed error, and removes nothing', async () => {
    const job = await producer.add('acme', 'faults', 'non-retryable', { label: 'kept' });
    await waitForLetter('acme', job.id);
    for (const page of [
      { limit: NaN },
      { limit: 0 },
      { limit: 2.5 },
      { offset: -1 },
      { offset: NaN },
    ]) {
      await expect(deadLetters.list('acme', page)).rejects.toThrow(InvalidDeadLetterQueryError);
    }
    expect((await deadLetters.list('acme', { limit: 1_000 })).limit).toBe(100);
    await expect(deadLetters.purge('acme', '')).rejects.toThrow(InvalidJobIdError);
    await expect(deadLetters.purge('acme', '')).rejects.toThrow(/leave it out/);
    expect(await letterOf('acme', job.id)).toBeDefined();
    expect(await deadLetters.purge('acme', job.id)).toBe(1);
  });

  it('does not let a tenant whose every job hangs hold back another tenant', async () => {
    const hogs = [];
    for (let i = 0; i < 6; i++)
      hogs.push(await producer.add('acme', 'mixed', 'w', { label: `hog${i}`, fail: true }));
    const others = [];
    for (let i = 0; i < 2; i++)
      others.push(await producer.add('globex', 'mixed', 'w', { label: `other${i}` }));
    await waitFor(
      () => finished.filter((f) => f.tenant === 'globex').length === 2,
      "globex's jobs to finish",
    );
    // Each hanging attempt lost its slot at the 200 ms deadline, so globex got through after at
    // most 3 rounds of acme's attempts, before any of acme's retries (backoff 5 s) came back.
    for (let i = 0; i < 6; i++) expect(seen(`hog${i}`)).toHaveLength(1);
    expect(hogs).toHaveLength(6);
    expect(others).toHaveLength(2);
  });

  it('replays a dead letter under the same tenant and run id, with fresh attempts', async () => {
    replayFixed = false;
    const job = await producer.add('acme', 'faults', 'until-fixed', { label: 'fix' });
    const letter = await waitForLetter('acme', job.id);
    expect(letter.attempts).toBe(3);
    replayFixed = true;
    const replayed = await deadLetters.replay('acme', job.id);
    expect(replayed.id).toBe(`${job.id}.r1`);
    expect(replayed.tenantId).toBe('acme');
    const bull = registry.getQueue('faults').bullQueue;
    await waitFor(async () => (await bull.getJobState(replayed.id)) === 'completed', 'replay');
    const done = await bull.getJob(replayed.id);
    expect(done?.attemptsMade).toBe(1);
    expect(seen('fix')).toHaveLength(4);
    expect(done?.returnvalue).toEqual({
      tenant: 'acme',
      identity: { tenantId: 'acme', runId: job.id, key: `acme/${job.id}` },
    });
    expect(done?.data._tenant).toMatchObject({
      tenantId: 'acme',
      correlationId: letter.envelope.correlationId,
    });
    expect(await letterOf('acme', job.id)).toBeUndefined();
  });

  it('refuses to replay for a tenant that is no longer active', async () => {
    replayFixed = false;
    const job = await producer.add('acme', 'faults', 'until-fixed', { label: 'fix2' });
    await waitForLetter('acme', job.id);
    directory.inner.setStatus('acme', 'suspended');
    try {
      await expect(deadLetters.replay('acme', job.id)).rejects.toBeInstanceOf(TenantNotActiveError);
    } finally {
      directory.inner.setStatus('acme', 'active');
    }
    expect(await letterOf('acme', job.id)).toBeDefined();
    expect(await registry.getQueue('faults').bullQueue.getJob(`${job.id}.r1`)).toBeUndefined();
    // Suspended acme looked up as an active tenant's record: refused too, and the message says why.
    directory.inner.upsert({ id: 'other-active' });
    directory.inner.setStatus('acme', 'suspended');
    directory.substitute('acme', 'other-active');
    try {
      const refused = await deadLetters.replay('acme', job.id).catch((error: Error) => error);
      expect(refused).toBeInstanceOf(TenantNotActiveError);
      expect((refused as Error).message).toContain('returned the record of tenant "other-active"');
    } finally {
      directory.substitute('acme', undefined);
      directory.inner.setStatus('acme', 'active');
    }
    expect(await registry.getQueue('faults').bullQueue.getJob(`${job.id}.r1`)).toBeUndefined();
  });

  it('answers a replay while the directory is down or silent with TenantPortUnavailableError', async () => {
    replayFixed = false;
    const job = await producer.add('acme', 'faults', 'until-fixed', { label: 'fix3' });
    await waitForLetter('acme', job.id);
    directory.failNext('acme', 1);
    const down = await deadLetters.replay('acme', job.id).catch((error: Error) => error);
    expect(down).toBeInstanceOf(TenantPortUnavailableError);
    // About the replay, not about a job attempt that BullMQ would retry.
    expect((down as Error).message).toContain(`dead letter "${job.id}" was not replayed`);
    expect((down as Error).message).not.toContain('BullMQ retries');
    // A directory that never answers is an outage after guards.portTimeoutMs (300 ms here),
    // as for a job's guards: the replay does not hang with it.
    directory.hangNext('acme', 1);
    const started = Date.now();
    const silent = await deadLetters.replay('acme', job.id).catch((error: Error) => error);
    expect(silent).toBeInstanceOf(TenantPortUnavailableError);
    expect((silent as Error).message).toContain('no answer within guards.portTimeoutMs');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await letterOf('acme', job.id)).toBeDefined();
    expect(await registry.getQueue('faults').bullQueue.getJob(`${job.id}.r1`)).toBeUndefined();
  });

  it("lists a tenant's letters of every queue newest first, pages included (one read per queue)", async () => {
    const a = await producer.add('acme', 'faults', 'non-retryable', { label: 'page-a' });
    await waitForLetter('acme', a.id);
    const b = await producer.add('acme', 'faults', 'non-retryable', { label: 'page-b' });
    await waitForLetter('acme', b.id);
    const all = await deadLetters.list('acme', { limit: 100 });
    expect(all.items.length).toBe(Math.min(all.total, 100));
    expect(all.items.map((l) => l.jobId).slice(0, 2)).toEqual([b.id, a.id]);
    const times = all.items.map((l) => Date.parse(l.failedAt));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    expect(all.items.every((l) => l.tenantId === 'acme')).toBe(true);
    const paged: string[] = [];
    for (let offset = 0; offset < all.items.length; offset += 3) {
      const page = await deadLetters.list('acme', { offset, limit: 3 });
      paged.push(...page.items.map((l) => `${l.queue}/${l.jobId}`));
    }
    expect(paged).toEqual(all.items.map((l) => `${l.queue}/${l.jobId}`));
  });

  it("never shows tenant A's dead letters through tenant B's API", async () => {
    const job = await producer.add('acme', 'faults', 'non-retryable', { label: 'secret' });
    await waitForLetter('acme', job.id);
    const globex = await deadLetters.list('globex', { limit: 100 });
    expect(globex.items.filter((l) => l.tenantId !== 'globex')).toEqual([]);
    expect(globex.items.find((l) => l.jobId === job.id)).toBeUndefined();
    expect(await deadLetters.get('globex', job.id)).toBeUndefined();
    await expect(deadLetters.replay('globex', job.id)).rejects.toBeInstanceOf(
      DeadLetterNotFoundError,
    );
    expect(await deadLetters.purge('globex', job.id)).toBe(0);
    expect(await deadLetters.get('acme', job.id)).toBeDefined();
    expect(await deadLetters.purge('acme', job.id)).toBe(1);
    expect(await deadLetters.get('acme', job.id)).toBeUndefined();
  });

  it('recovers a final failure that no process dead-lettered (the failed set is the truth)', async () => {
    const definition = registry.getQueue('orphan').definition;
    // A bare BullMQ worker (no dead-letter plugin) stands for a process that died right after
    // BullMQ recorded the failure.
    const bare = new Worker(
      'orphan',
      async () => {
        throw new Error('failed where nobody recorded it');
      },
      { connection: redisConnection(), prefix: definition.bullPrefix },
    );
    try {
      const job = await producer.add('globex', 'orphan', 'lost', { label: 'lost' });
      const bull = registry.getQueue('orphan').bullQueue;
      await waitFor(async () => (await bull.getJobState(job.id)) === 'failed', 'orphan failure');
      expect(await letterOf('globex', job.id)).toBeUndefined();
      const plugin = app.get(DeadLetterWorkerPlugin);
      expect(await plugin.sweep(definition)).toBe(1);
      expect(await plugin.sweep(definition)).toBe(0);
      const letter = await letterOf('globex', job.id);
      expect(letter).toMatchObject({ tenantId: 'globex', name: 'lost', attempts: 1 });
      expect(letter?.failedReason).toBe('failed where nobody recorded it');
      const alert = alerts.filter((a) => a.letter.jobId === job.id);
      expect(alert).toHaveLength(1);
      // Swept, outside any worker event: the listener still runs in the job's context.
      expect(alert[0]).toMatchObject({
        contextTenant: 'globex',
        logFields: `tenant=globex job=${job.id} correlation=${letter!.envelope.correlationId}`,
        clsSetup: `set up for ${job.id}`,
        clsId: letter!.envelope.correlationId,
      });
    } finally {
      await bare.close();
    }
  });
});
