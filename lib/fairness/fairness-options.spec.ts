import { InvalidTenantQueueOptionsError } from '../core/errors';
import { isFairnessOn, resolveFairnessOptions } from './fairness-options';

describe('resolveFairnessOptions', () => {
  it('fills in the documented defaults', () => {
    expect(resolveFairnessOptions('q', true)).toMatchObject({
      defaultWeight: 1,
      maxConsecutive: 5,
      defaultConcurrency: 0,
      maxBacklog: 0,
      window: 0,
      windowPerSlot: 4,
      slowLane: { failureThreshold: 20, windowMs: 60_000, share: 0.1, recoverAt: 10 },
    });
  });

  it.each([
    [{ maxConsecutive: 0 }, 'fairness.maxConsecutive'],
    [{ defaultWeight: -1 }, 'fairness.defaultWeight'],
    [{ defaultConcurrency: 1.5 }, 'fairness.defaultConcurrency'],
    [{ slowLane: { share: 2 } }, 'fairness.slowLane.share'],
    [{ slowLane: { failureThreshold: 4, recoverAt: 4 } }, 'fairness.slowLane.recoverAt'],
    [{ maxBacklogg: 3 }, 'fairness.maxBacklogg'],
    [{ share: 'cpu' }, 'fairness.share'],
    [{ fairKey: 'user' }, 'fairness.fairKey'],
    [{ fairKey: true }, 'fairness.fairKey'],
    [
      { priorityByTurn: true, lanes: { a: { share: 0.5 }, b: { share: 0.5 } } },
      'fairness.priorityByTurn',
    ],
  ])('rejects %j naming %s', (input, field) => {
    const run = () => resolveFairnessOptions('q', input as never);
    expect(run).toThrow(InvalidTenantQueueOptionsError);
    expect(run).toThrow(`registerQueue(q).${field}`);
  });

  it('takes every pair of modes on one queue; refuses only what cannot work', () => {
    const modes: Record<string, object> = {
      cap: { defaultConcurrency: 2 },
      rate: { rateLimit: { max: 10, per: 1000, burst: 2 } },
      lanes: { lanes: { now: { share: 0.5 }, bulk: { share: 0.5, jobs: ['bulk'] } } },
      slow: { slowLane: { failureThreshold: 3, windowMs: 3000, recoverAt: 0 } },
      time: { share: 'time' },
      floors: { defaultMinConcurrency: 1 },
      keys: { fairKey: 'job' },
      backlog: { maxBacklog: 10 },
      byTurn: { priorityByTurn: true },
    };
    const names = Object.keys(modes);
    const refused: string[] = [];
    for (const [i, a] of names.entries()) {
      for (const b of names.slice(i + 1)) {
        try {
          resolveFairnessOptions('q', { ...modes[a], ...modes[b] });
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidTenantQueueOptionsError);
          refused.push(`${a}+${b}: ${(error as Error).message}`);
        }
      }
    }
    expect(refused).toEqual([
      'lanes+byTurn: Invalid TenantQueueModule option "registerQueue(q).fairness.priorityByTurn": ' +
        "cannot be true on a queue with lanes, whose jobs take their lane's BullMQ priority: " +
        'remove priorityByTurn (turns still hold inside each lane), or declare one lane at most.',
    ]);
    // A floor above the cap is refused; one declared lane is the queue itself, so it may.
    expect(() =>
      resolveFairnessOptions('q', { defaultConcurrency: 2, defaultMinConcurrency: 3 }),
    ).toThrow('must not be above defaultConcurrency (2)');
    expect(
      resolveFairnessOptions('q', { priorityByTurn: true, lanes: { only: { share: 1 } } }).lanes,
    ).toHaveLength(1);
  });

  it("takes share 'jobs' (default) or 'time', whose maxConsecutive default is larger", () => {
    expect(resolveFairnessOptions('q', {})).toMatchObject({ share: 'jobs', maxConsecutive: 5 });
    expect(resolveFairnessOptions('q', { share: 'time' })).toMatchObject({
      share: 'time',
      maxConsecutive: 1000,
    });
    expect(resolveFairnessOptions('q', { share: 'time', maxConsecutive: 8 }).maxConsecutive).toBe(
      8,
    );
    expect(() => resolveFairnessOptions('q', { share: 'Time' as never })).toThrow(
      "must be 'jobs' or 'time'",
    );
  });

  it("takes fairKey 'job' or 'actor', and none by default", () => {
    expect(resolveFairnessOptions('q', true).fairKey).toBeUndefined();
    expect(resolveFairnessOptions('q', { fairKey: 'job' }).fairKey).toBe('job');
    expect(resolveFairnessOptions('q', { fairKey: 'actor' }).fairKey).toBe('actor');
  });

  it('treats absent, false and enabled: false as off', () => {
    expect(isFairnessOn(undefined)).toBe(false);
    expect(isFairnessOn(false)).toBe(false);
    expect(isFairnessOn({ enabled: false })).toBe(false);
    expect(isFairnessOn({})).toBe(true);
  });
});
