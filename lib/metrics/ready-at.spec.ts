import type { Job } from 'bullmq';
import { readyAtOf } from './ready-at';

const job = (fields: { id?: string; timestamp: number; delay?: number }) =>
  ({ id: fields.id ?? 'j1', timestamp: fields.timestamp, opts: { delay: fields.delay } }) as Job;

describe("readyAtOf: where a job's scheduling lag starts", () => {
  it("starts at BullMQ's timestamp: the enqueue time, as a job is written once at add()", () => {
    const at = Date.parse('2026-12-01T10:00:00.000Z');
    expect(readyAtOf(job({ timestamp: at }))).toBe(at);
  });

  it('adds the delay of a delayed job', () => {
    const at = Date.parse('2026-12-01T10:00:00.000Z');
    expect(readyAtOf(job({ timestamp: at, delay: 1500 }))).toBe(at + 1500);
  });

  it('starts at the occurrence of a scheduled job', () => {
    const id = 'sched:daily~20261201T090000Z';
    expect(readyAtOf(job({ id, timestamp: 1 }))).toBe(Date.UTC(2026, 11, 1, 9, 0, 0));
  });

  it('reads an id without a whole occurrence at its end as a plain job', () => {
    expect(readyAtOf(job({ id: 'x~20261201T0900Z.r1', timestamp: 1234, delay: 10 }))).toBe(1244);
  });
});
