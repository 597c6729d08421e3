import { isTenantIdOf } from './tenant-id';

describe('isTenantIdOf', () => {
  const any = /^[\s\S]{1,64}$/u;

  it('refuses an unpaired surrogate, high or low, anywhere, that the pattern admits', () => {
    for (const id of ['\uD800', 'a\uD800', 'a\uDC00b', '\uDBFF\uDBFF\uDC00', '\uDC00\uD800']) {
      expect([id, any.test(id), isTenantIdOf(any, id)]).toEqual([id, true, false]);
    }
  });

  it('admits well-formed pairs, and refuses what the pattern refuses', () => {
    expect(isTenantIdOf(any, 'a\uD83D\uDE00')).toBe(true);
    expect(isTenantIdOf(any, 'ünïcödé-租户')).toBe(true);
    expect(isTenantIdOf(/^[a-z]+$/, 'A')).toBe(false);
  });
});
