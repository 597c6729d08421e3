import { TenantMetricsRecorder } from './tenant-metrics.recorder';

/** A recorder whose Redis writes (`writeAll`) are held until the test lets each one finish. */
function recorderWithHeldWrites() {
  const recorder = Object.create(TenantMetricsRecorder.prototype) as TenantMetricsRecorder;
  const finish: (() => void)[] = [];
  let started = 0;
  (recorder as unknown as { writeAll: () => Promise<void> }).writeAll = () => {
    started++;
    return new Promise<void>((resolve) => finish.push(resolve));
  };
  return { recorder, finish, started: () => started };
}

describe('TenantMetricsRecorder.flush', () => {
  it('resolves only after a write that began after the call (a running one took its batches earlier)', async () => {
    const { recorder, finish, started } = recorderWithHeldWrites();
    const first = recorder.flush();
    const second = recorder.flush();
    const third = recorder.flush();
    expect(started()).toBe(1);
    let secondDone = false;
    void second.then(() => (secondDone = true));

    finish[0]();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    expect(started()).toBe(2); // one more write for the calls made while the first ran
    expect(secondDone).toBe(false);

    finish[1]();
    await Promise.all([second, third]);
    expect(started()).toBe(2); // the second and third call shared it
  });

  it('writes once when nothing is running', async () => {
    const { recorder, finish, started } = recorderWithHeldWrites();
    const done = recorder.flush();
    finish[0]();
    await done;
    expect(started()).toBe(1);
  });
});
