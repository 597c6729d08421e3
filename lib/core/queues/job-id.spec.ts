import { newJobId } from './job-id';
import { BULLMQ_KEY_SUFFIXES, isModuleJobId } from './job-id.check';

describe('newJobId', () => {
  it('gives distinct 16-character base64url ids that BullMQ takes as custom ids', () => {
    const ids = new Set<string>();
    // Checked in plain code and asserted once: 400,000 `expect` calls took 12 s of the suite.
    const bad: string[] = [];
    for (let i = 0; i < 100_000; i++) {
      const id = newJobId();
      const ok =
        /^[A-Za-z0-9_-]{16}$/.test(id) &&
        `${parseInt(id, 10)}` !== id &&
        !BULLMQ_KEY_SUFFIXES.has(id) &&
        !isModuleJobId(id);
      if (!ok) bad.push(id);
      ids.add(id);
    }
    expect(bad).toEqual([]);
    expect(ids.size).toBe(100_000);
  });
});
