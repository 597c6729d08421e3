import { InvalidPayloadError } from '../errors';
import { plainPayloadCopy } from './payload.check';

describe('plainPayloadCopy', () => {
  it('copies `_run` before checking it: a getter there shows the check and the store one value', () => {
    let reads = 0;
    const data = {
      _run: {
        get timeoutMs() {
          reads += 1;
          return reads === 1 ? 1000 : -5;
        },
      },
    };
    const copy = plainPayloadCopy('q', 'job', data);
    // What is stored is what was checked, read once.
    expect(JSON.parse(JSON.stringify(copy))).toEqual({ _run: { timeoutMs: 1000 } });
    expect(reads).toBe(1);
  });

  it('refuses `_run` options that are invalid, as before', () => {
    expect(() => plainPayloadCopy('q', 'job', { _run: { timeoutMs: -5 } })).toThrow(
      InvalidPayloadError,
    );
    expect(() => plainPayloadCopy('q', 'job', { _run: 'soon' })).toThrow(InvalidPayloadError);
  });
});
