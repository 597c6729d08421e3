import { InvalidPayloadError } from '../errors';
import {
  RUN_OPTIONS_KEY,
  runOptionsProblem,
  takeRunOptions,
  withRunOptions,
} from './job-run-options';

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

  it('detaches them from the job data once', () => {
    const job = { data: { a: 1, [RUN_OPTIONS_KEY]: { runId: 'r-2' } } as Record<string, unknown> };
    expect(takeRunOptions(job)).toEqual({ options: { runId: 'r-2' } });
    expect(job.data).toEqual({ a: 1 });
    expect(takeRunOptions(job)).toEqual({ options: { runId: 'r-2' } });
  });

  it('reports a malformed key instead of trusting it', () => {
    const job = { data: { [RUN_OPTIONS_KEY]: { timeoutMs: -1 } } };
    expect(takeRunOptions(job).problem).toMatch(/positive integer/);
    expect(job.data).toEqual({});
  });
});
