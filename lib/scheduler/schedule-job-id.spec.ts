import { formatOccurrence, tenantCronJobId, tenantScheduleJobId } from './schedule-job-id';

describe('scheduled job ids', () => {
  const occurrence = Date.parse('2026-11-01T09:30:00.000Z');

  it('are deterministic, colon-free and never integer-like', () => {
    expect(formatOccurrence(occurrence)).toBe('20261101T093000Z');
    expect(tenantCronJobId('digest', 'acme', occurrence)).toBe('digest~acme~20261101T093000Z');
    expect(tenantCronJobId('digest', 'acme', new Date(occurrence))).toBe(
      tenantCronJobId('digest', 'acme', occurrence),
    );
    expect(tenantScheduleJobId('acme', 'nightly', occurrence)).toBe(
      'sched~acme~nightly~20261101T093000Z',
    );
    for (const id of [tenantCronJobId('1', '2', 0), tenantScheduleJobId('1', '2', 0)]) {
      expect(id).not.toContain(':');
      expect(Number.isNaN(Number(id))).toBe(true);
    }
  });
});
