import type { Job } from 'bullmq';
import { TenantEnvelope } from '../core/types/tenant-envelope.interface';
import { readyAtOf } from './ready-at';

const job = (fields: { id?: string; timestamp: number; delay?: number }) =>
  ({ id: fields.id ?? 'j1', timestamp: fields.timestamp, opts: { delay: fields.delay } }) as Job;
const envelope = (enqueuedAt: string) => ({ tenantId: 'acme', enqueuedAt }) as TenantEnvelope;

describe("readyAtOf: where a job's scheduling lag starts", () => {
  it('starts at enqueue, not at admission into BullMQ (a fair gate admits later)', () => {
    const enqueuedAt = Date.parse('2026-12-01T10:00:00.000Z');
    expect(
      readyAtOf(job({ timestamp: enqueuedAt + 30_000 }), envelope('2026-12-01T10:00:00.000Z')),
    ).toBe(enqueuedAt);
  });

  it('adds the delay of a delayed job', () => {
    const at = Date.parse('2026-12-01T10:00:00.000Z');
    expect(
      readyAtOf(job({ timestamp: at, delay: 1500 }), envelope('2026-12-01T10:00:00.000Z')),
    ).toBe(at + 1500);
  });

  it('starts at the occurrence of a scheduled job', () => {
    const id = 'sched:daily~20261201T090000Z';
    expect(readyAtOf(job({ id, timestamp: 1 }), envelope('2026-12-01T09:00:02.000Z'))).toBe(
      Date.UTC(2026, 11, 1, 9, 0, 0),
    );
  });

  it("falls back to BullMQ's timestamp for an impossible instant that passed the pattern", () => {
    expect(readyAtOf(job({ timestamp: 1234, delay: 10 }), envelope('2024-19-39T29:59:59Z'))).toBe(
      1244,
    );
  });
});
