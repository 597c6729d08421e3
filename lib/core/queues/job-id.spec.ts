import { newJobId } from './job-id';
import { BULLMQ_KEY_SUFFIXES, isModuleJobId } from './job-id.check';

describe('newJobId', () => {
  it('gives distinct 16-character base64url ids that BullMQ takes as custom ids', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 100_000; i++) {
      const id = newJobId();
      expect(id).toMatch(/^[A-Za-z0-9_-]{16}$/);
      expect(`${parseInt(id, 10)}` === id).toBe(false);
      expect(BULLMQ_KEY_SUFFIXES.has(id)).toBe(false);
      expect(isModuleJobId(id)).toBe(false);
      ids.add(id);
    }
    expect(ids.size).toBe(100_000);
  });
});
