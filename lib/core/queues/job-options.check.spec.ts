import { jobOptionsProblem } from './job-options.check';
import { BULLMQ_MAJOR } from '../bullmq/bullmq-seam';

const check = (opts: object, json = '{}') => jobOptionsProblem(opts, json);

describe('jobOptionsProblem', () => {
  it.each([
    [{}],
    [{ jobId: 'inv-42', priority: 5, delay: 1000, attempts: 3 }],
    [{ jobId: 'a:b:c'.replace(/:/g, '~') }],
    [{ backoff: 1000 }],
    [{ backoff: { type: 'exponential', delay: 1000, jitter: 0.5 } }],
    [{ backoff: { type: 'custom-strategy' } }],
    [{ removeOnComplete: true, removeOnFail: 100 }],
    [{ removeOnComplete: { count: 10 }, removeOnFail: { age: 3600, limit: 5 } }],
    [{ deduplication: { id: 'd1', ttl: 1000 } }],
    [{ lifo: true }],
    [{ priority: 0, lifo: true }],
    [{ parent: { id: 'p1', queue: '{tq:q}:q' } }],
    [{ keepLogs: 10, stackTraceLimit: 5, sizeLimit: 1000, timestamp: Date.now() }],
    [{ lane: 'bulk' }],
  ])('takes %j', (opts) => {
    expect(check(opts)).toBeUndefined();
  });

  // One case per rule: [what, options, option named, BullMQ's Queue.add refuses it too]
  const cases: [string, object, string, boolean][] = [
    ['a number jobId', { jobId: 5 }, 'jobId', true],
    ['an empty jobId', { jobId: '' }, 'jobId', false],
    ['jobId "0"', { jobId: '0' }, 'jobId', true],
    ['a jobId starting with "0:"', { jobId: '0:x' }, 'jobId', true],
    ['an integer jobId', { jobId: '1001' }, 'jobId', true],
    ['a negative integer jobId', { jobId: '-7' }, 'jobId', true],
    ['a jobId with ":"', { jobId: 'a:1' }, 'jobId', true],
    ['a jobId of three ":" parts', { jobId: 'a:b:c' }, 'jobId', false],
    ['a float priority', { priority: 1.5 }, 'priority', true],
    ['a priority above the limit', { priority: 3e6 }, 'priority', true],
    ['a string priority', { priority: '3' }, 'priority', true],
    ['a negative priority', { priority: -1 }, 'priority', false],
    ['a NaN priority', { priority: NaN }, 'priority', true],
    ['a NaN delay', { delay: NaN }, 'delay', true],
    ['an infinite delay', { delay: Infinity }, 'delay', true],
    ['a negative delay', { delay: -5 }, 'delay', false],
    ['a string delay', { delay: '100' }, 'delay', false],
    ['NaN attempts', { attempts: NaN }, 'attempts', true],
    ['negative attempts', { attempts: -1 }, 'attempts', false],
    ['string attempts', { attempts: '3' }, 'attempts', false],
    ['a NaN timestamp', { timestamp: NaN }, 'timestamp', true],
    ['a deduplication without id', { deduplication: {} }, 'deduplication.id', true],
    ['a number deduplication id', { deduplication: { id: 5 } }, 'deduplication.id', false],
    [
      'deduplication with a parent',
      { deduplication: { id: 'd' }, parent: { id: 'p', queue: 'q' } },
      'deduplication',
      true,
    ],
    ['debounce', { debounce: { id: 'x' } }, 'debounce', true],
    [
      'a jitter above 1',
      { backoff: { type: 'fixed', delay: 1, jitter: 2 } },
      'backoff.jitter',
      true,
    ],
    ['a backoff string', { backoff: 'weird' }, 'backoff', false],
    ['a backoff without type', { backoff: { delay: 5 } }, 'backoff', false],
    ['a negative backoff delay', { backoff: { type: 'fixed', delay: -1 } }, 'backoff.delay', false],
    [
      'two exclusive parent flags',
      { failParentOnFailure: true, removeDependencyOnFailure: true },
      'parent options',
      true,
    ],
    ['a sizeLimit the payload exceeds', { sizeLimit: 1 }, 'sizeLimit', true],
    ['removeOnComplete "x"', { removeOnComplete: 'x' }, 'removeOnComplete', false],
    ['removeOnComplete -1', { removeOnComplete: -1 }, 'removeOnComplete', false],
    ['removeOnFail { age: "x" }', { removeOnFail: { age: 'x' } }, 'removeOnFail.age', false],
    ['removeOnFail {}', { removeOnFail: {} }, 'removeOnFail', false],
    [
      'removeOnFail with an unknown key',
      { removeOnFail: { count: 1, keep: 2 } },
      'removeOnFail.keep',
      false,
    ],
    ['removeOnComplete Infinity', { removeOnComplete: Infinity }, 'removeOnComplete', true],
    ['lifo with priority', { lifo: true, priority: 3 }, 'lifo', false],
    ['a string keepLogs', { keepLogs: 'x' }, 'keepLogs', false],
    ['a float stackTraceLimit', { stackTraceLimit: 1.5 }, 'stackTraceLimit', false],
    ['repeat', { repeat: { every: 1000 } }, 'repeat', false],
    // bullmq 6 refuses `debounce` itself; bullmq 5 takes it as deduplication, so only we refuse.
    ['debounce', { debounce: { id: 'd' } }, 'debounce', BULLMQ_MAJOR >= 6],
    ['a parent without queue', { parent: { id: 'p' } }, 'parent', false],
    ['a parent that is a string', { parent: 'p' }, 'parent', false],
  ];

  it.each(cases)('refuses %s, naming the option', (_what, opts, option, bullmq) => {
    expect(check(opts, '{"a":1}')).toEqual({ option, why: expect.any(String) });
    // `onlyBullmq` keeps exactly the rules plain BullMQ's Queue.add enforces itself.
    expect(jobOptionsProblem(opts, '{"a":1}', true) !== undefined).toBe(bullmq);
  });

  it("words BullMQ's own refusals with BullMQ's message", () => {
    expect(check({ jobId: '1001' })?.why).toMatch(/Custom Id cannot be integers/);
    expect(check({ priority: 3e6 })?.why).toMatch(/Priority should be between 0 and 2097151/);
  });
});
