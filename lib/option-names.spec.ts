import 'reflect-metadata';
import { InvalidTenantQueueOptionsError } from './core/errors';
import { InvalidScheduleError } from './scheduler';
import { suggestOption } from './core/options/option-names';
import { resolveTenantQueueOptions } from './core/options/core.options';
import { resolveEnvelopeOptions } from './core/options/envelope.options';
import { resolveTiers } from './core/options/tiers.options';
import { resolveFairnessOptions } from './fairness/fairness-options';
import { resolveGuardOptions } from './guards/tenant-guard.options';
import { resolveMetricsOptions } from './metrics/metrics.options';
import { validateScheduleInput } from './scheduler/tenant-schedule.dto';
import { resolveTenantSchedulerOptions } from './scheduler/tenant-scheduler.options';
import { FEATURE_OPTIONS, checkQueueOptionNames } from './tenant-queue.module';

/** The features' `forRoot` option names, as the root module gives them to the kernel. */
const featureOptions = (FEATURE_OPTIONS as { useValue: string[] }).useValue;

/** The message `check` throws, which must be a typed error. */
function refusal(
  check: () => unknown,
  type: abstract new (...args: never[]) => Error = InvalidTenantQueueOptionsError,
): string {
  try {
    check();
  } catch (error) {
    expect(error).toBeInstanceOf(type);
    return (error as Error).message;
  }
  throw new Error('accepted');
}

const root = { connection: { host: '127.0.0.1' } };

describe('an unknown option name is refused with the name meant', () => {
  it.each([
    // [object, call, the field named, the suggestion]
    [
      'forRoot',
      () => resolveTenantQueueOptions({ ...root, prefx: 'a' } as never, featureOptions),
      'prefix',
    ],
    [
      'forRoot',
      () => resolveTenantQueueOptions({ ...root, enqueueTimeout: 1 } as never, featureOptions),
      'enqueueTimeoutMs',
    ],
    [
      'forRoot',
      () => resolveTenantQueueOptions({ ...root, banana: 1 } as never, featureOptions),
      null,
    ],
    [
      'forRoot',
      () => resolveTenantQueueOptions({ ...root, directroy: {} } as never, featureOptions),
      'directory',
    ],
    [
      'forRoot.resolution',
      () =>
        resolveTenantQueueOptions(
          { ...root, resolution: { oder: ['header'] } } as never,
          featureOptions,
        ),
      'order',
    ],
    [
      'forRoot.resolution',
      () =>
        resolveTenantQueueOptions(
          { ...root, resolution: { strategies: ['header'] } } as never,
          featureOptions,
        ),
      'order',
    ],
    [
      'forRoot.envelope',
      () => resolveEnvelopeOptions({ secrets: 'x'.repeat(40) } as never),
      'secret',
    ],
    [
      'forRoot.scheduler',
      () => resolveTenantSchedulerOptions({ scheduler: { batchSiz: 5 } } as never),
      'batchSize',
    ],
    ['forRoot.guards', () => resolveGuardOptions({ portTimeoutMS: 5 } as never), 'portTimeoutMs'],
    ['forRoot.metrics', () => resolveMetricsOptions({ metrics: { snk: false } } as never), 'sink'],
    ['forRoot.tiers.<tier>', () => resolveTiers({ gold: { wieght: 2 } }), 'weight'],
    ['forRoot.tiers.<tier>', () => resolveTiers({ gold: { concurrency: 2 } }), 'maxConcurrency'],
    [
      'forRoot.tiers.<tier>.queues.<queue>',
      () => resolveTiers({ gold: { queues: { q: { minConcurency: 1 } } } }),
      'minConcurrency',
    ],
    [
      'forRoot.tiers.<tier>.rateLimit',
      () => resolveTiers({ gold: { rateLimit: { max: 1, duration: 10 } } }),
      'per',
    ],
    [
      'registerQueue',
      () => checkQueueOptionNames({ name: 'q', fairnes: true } as never),
      'fairness',
    ],
    ['registerQueue', () => checkQueueOptionNames({ name: 'q', attempt: 3 } as never), 'attempts'],
    [
      'registerQueue.fairness',
      () => resolveFairnessOptions('q', { maxConcurrency: 3 } as never),
      'defaultConcurrency',
    ],
    ['registerQueue.fairness', () => resolveFairnessOptions('q', { widow: 3 } as never), 'window'],
    [
      'registerQueue.fairness',
      () => resolveFairnessOptions('q', { weight: 3 } as never),
      'defaultWeight',
    ],
    [
      'registerQueue.fairness.slowLane',
      () => resolveFairnessOptions('q', { slowLane: { treshold: 3 } } as never),
      null,
    ],
    [
      'registerQueue.fairness.slowLane',
      () => resolveFairnessOptions('q', { slowLane: { windowMS: 3 } } as never),
      'windowMs',
    ],
    [
      'registerQueue.fairness.lanes.<lane>',
      () => resolveFairnessOptions('q', { lanes: { a: { share: 1, job: [] } } } as never),
      'jobs',
    ],
    [
      'registerQueue.fairness.rateLimit',
      () => resolveFairnessOptions('q', { rateLimit: { max: 1, pr: 10 } } as never),
      'per',
    ],
  ])('%s', (_object, check, suggestion) => {
    const message = refusal(check);
    expect(message).toContain('is not a known option');
    if (suggestion === null) expect(message).not.toContain('did you mean');
    else expect(message).toContain(`did you mean "${suggestion}"?`);
    expect(message).toMatch(/\(known here: [a-zA-Z, ]+\)/);
  });

  it('names the full path of the field', () => {
    expect(refusal(() => resolveFairnessOptions('media', { maxConcurrency: 3 } as never))).toBe(
      'Invalid TenantQueueModule option "registerQueue(media).fairness.maxConcurrency": is not a ' +
        'known option; did you mean "defaultConcurrency"? (known here: defaultWeight, ' +
        'maxConsecutive, defaultConcurrency, defaultMinConcurrency, maxBacklog, window, ' +
        'windowPerSlot, minWindow, leaseMs, tickMs, resendAfterMs, dispatchBatch, share, fairKey, ' +
        'enabled, slowLane, rateLimit, lanes, defaultLane, priorityByTurn).',
    );
    expect(
      refusal(() =>
        resolveTenantQueueOptions({ ...root, resolution: { oder: [] } } as never, featureOptions),
      ),
    ).toContain('"resolution.oder": is not a known option; did you mean "order"?');
  });

  it('a schedule (data, not options) names the field meant too', () => {
    const message = refusal(
      () =>
        validateScheduleInput({ cron: '* * * * *', timezon: 'UTC', job: { name: 'x' } } as never),
      InvalidScheduleError,
    );
    expect(message).toContain('did you mean "timezone"?');
  });

  it('suggests within two edits (swaps count one), case aside, and aliases only where they exist', () => {
    expect(suggestOption('oder', ['order', 'header'])).toBe('order');
    expect(suggestOption('ordre', ['order', 'header'])).toBe('order');
    expect(suggestOption('ORDER', ['order'])).toBe('order');
    expect(suggestOption('odrerxy', ['order'])).toBeUndefined();
    expect(suggestOption('maxConcurrency', ['defaultConcurrency'])).toBe('defaultConcurrency');
    expect(suggestOption('defaultConcurrency', ['maxConcurrency'])).toBe('maxConcurrency');
    expect(suggestOption('maxConcurrency', ['window'])).toBeUndefined();
  });
});
