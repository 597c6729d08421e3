import { callListener, thrownText } from './call-listener';

describe('callListener', () => {
  it("hands a throw and an async listener's rejection to failed, and a result to no one", async () => {
    const failed: unknown[] = [];
    const fail = (error: unknown) => void failed.push((error as Error).message);
    callListener(() => 1, 'event', fail);
    callListener(
      (event: string) => {
        throw new Error(`threw on ${event}`);
      },
      'a',
      fail,
    );
    callListener(
      async (event: string) => {
        await Promise.resolve();
        throw new Error(`rejected on ${event}`);
      },
      'b',
      fail,
    );
    expect(failed).toEqual(['threw on a']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(failed).toEqual(['threw on a', 'rejected on b']);
  });
});

describe('thrownText', () => {
  it("names what was thrown: an Error's message, a string, an object as JSON, bounded, never throwing", () => {
    expect(thrownText(new Error('boom'))).toBe('boom');
    expect(thrownText('not an error')).toBe('"not an error"');
    expect(thrownText({ code: 42 })).toBe('{"code":42}');
    expect(thrownText(undefined)).toBe('undefined');
    expect(thrownText(7n)).toBe('7');
    expect(thrownText('x'.repeat(500)).length).toBeLessThanOrEqual(202);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(thrownText(cyclic)).toBe('a value of type object that cannot be shown');
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
      },
    );
    expect(typeof thrownText(hostile)).toBe('string');
  });
});
