import { JobCancelledError, formatCancelledReason, parseCancelReason } from './job-cancelled.error';

describe('cancel reasons', () => {
  it('round-trips through a failedReason', () => {
    expect(
      parseCancelReason(formatCancelledReason('TENANT_SUSPENDED', 'Tenant acme is suspended')),
    ).toBe('TENANT_SUSPENDED');
  });

  it('ignores ordinary failures', () => {
    expect(parseCancelReason('boom')).toBeUndefined();
    expect(parseCancelReason(undefined)).toBeUndefined();
    expect(parseCancelReason('x [cancelled:MISSING_TENANT] y')).toBeUndefined();
  });

  it('round-trips your own reasons: letters of either case, digits, "_", "-", "."', () => {
    for (const reason of ['OVER_QUOTA', 'over-quota', 'QUOTA_2', 'plan.limit', 'x'.repeat(64)]) {
      const error = new JobCancelledError(reason, 'over the plan');
      expect(parseCancelReason(formatCancelledReason(error.reason, error.message))).toBe(reason);
    }
  });

  it('refuses a reason that could not be read back, with a TypeError that says what to use', () => {
    for (const reason of ['', 'over quota', 'a]b', 'x'.repeat(65), 'é']) {
      expect(() => new JobCancelledError(reason, 'm')).toThrow(TypeError);
    }
    expect(() => new JobCancelledError('over quota', 'm')).toThrow(/1-64 letters, digits/);
  });
});
