import { tenantLogFields } from './tenant-log-fields';

describe('tenantLogFields', () => {
  it('writes ids of the default pattern as they are, and - where unknown', () => {
    expect(tenantLogFields({ tenantId: 'acme-1', jobId: '0bmHoZ_O3kLq9xYz' })).toBe(
      'tenant=acme-1 job=0bmHoZ_O3kLq9xYz correlation=-',
    );
  });

  it('quotes and escapes an id that could end the line or forge a field', () => {
    const line = tenantLogFields({ tenantId: 'a\nb job=forged', correlationId: 'x"y\\z' });
    expect(line).toBe('tenant="a\\u000ab\\u0020job=forged" job=- correlation="x\\u0022y\\u005cz"');
    expect(line).not.toMatch(/[\n\r]/);
    expect(tenantLogFields({ tenantId: '', jobId: '-' })).toBe('tenant="" job="-" correlation=-');
    expect(tenantLogFields({ tenantId: 'a\u2028b\u0085c' })).toContain('"a\\u2028b\\u0085c"');
  });

  it('leaves letters outside ASCII readable', () => {
    expect(tenantLogFields({ tenantId: 'café🚀' })).toBe('tenant=café🚀 job=- correlation=-');
  });
});
