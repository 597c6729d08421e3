import { InvalidPayloadError } from '../errors';
import { Job } from 'bullmq';
import {
  RUN_OPTIONS_KEY,
  runOptionsOf,
  runOptionsProblem,
  withRunOptions,
} from './job-run-options';
import { TenantBullJob, attachRun } from '../processor/tenant-bull-job';

describe('run options', () => {
  it('adds them under the reserved key without touching the payload', () => {
    const data = { a: 1 };
    expect(withRunOptions(data, { timeoutMs: 500, runId: 'r-1' })).toEqual({
      a: 1,
      [RUN_OPTIONS_KEY]: { timeoutMs: 500, runId: 'r-1' },
    });
    expect(data).toEqual({ a: 1 });
  });

  it.each([
    [{ timeoutMs: 0 }, /positive integer/],
    [{ timeoutMs: 1.5 }, /positive integer/],
    [{ timeoutMs: 2 ** 31 }, /above/],
    [{ runId: 'a:b' }, /runId/],
    [{ runId: '' }, /runId/],
    [{ other: 1 }, /unknown field "other"/],
    ['x', /not an object/],
  ])('refuses %j', (options, why) => {
    expect(runOptionsProblem(options)).toMatch(why);
    expect(() => withRunOptions({}, options as never)).toThrow(InvalidPayloadError);
  });

  const queue = { opts: {}, name: 'q', toKey: (key: string) => key } as never;

  it.each([
    ["a job of the module's workers", () => new TenantBullJob(queue, 'n', { a: 1 }, {}, 'j1')],
    ['any other job', () => new Job(queue, 'n', { a: 1 }, {}, 'j1')],
  ])('attaches them to %s, with the run id', (_, make) => {
    const job = make();
    attachRun(job, undefined, { runId: 'r-2', timeoutMs: 50 }, undefined, { runId: 'r-2' });
    expect(runOptionsOf(job)).toEqual({ runId: 'r-2', timeoutMs: 50 });
    expect((job as TenantBullJob).runId).toBe('r-2');
    expect(Object.keys(job.toJSON())).not.toContain('keptRunOptions');
    const other = make();
    attachRun(other, undefined, {}, undefined, undefined);
    expect(runOptionsOf(other)).toEqual({});
    expect((other as TenantBullJob).runId).toBe('j1');
  });

  it('keeps one hidden class per job class (no property added per job)', () => {
    const a = new TenantBullJob(queue, 'n', { a: 1 }, {}, 'j1');
    const b = new TenantBullJob(queue, 'n', { a: 2 }, {}, 'j2');
    const keysBefore = Object.keys(a);
    attachRun(a, undefined, { runId: 'r' }, undefined, { runId: 'r' });
    expect(Object.keys(a)).toEqual(keysBefore);
    expect(Object.keys(b)).toEqual(keysBefore);
  });
});
