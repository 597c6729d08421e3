import { formatCancelledReason, parseCancelReason } from './job-cancelled.error';

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
});
