import { callListener } from './call-listener';

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
