import { InvalidTenantQueueOptionsError } from '../core/errors';
import { Idempotent } from './idempotent.decorator';

describe('@Idempotent options', () => {
  it('takes whole positive milliseconds, or nothing', () => {
    expect(() => Idempotent()).not.toThrow();
    expect(() => Idempotent({ ttl: 86_400_000, lease: 30_000 })).not.toThrow();
    expect(() => Idempotent({ ttl: 1, lease: 1 })).not.toThrow();
  });

  // Taken before, Redis refused the marker's expiry ("invalid expire time") only after the
  // handler ran: every attempt ran the handler, then the job was dead-lettered.
  it.each([
    [{ ttl: 0 }, 'ttl'],
    [{ ttl: -1 }, 'ttl'],
    [{ ttl: 1.5 }, 'ttl'],
    [{ ttl: Number.NaN }, 'ttl'],
    [{ ttl: '60000' as unknown as number }, 'ttl'],
    [{ lease: 0 }, 'lease'],
    [{ lease: Number.POSITIVE_INFINITY }, 'lease'],
    [{ lease: 2_147_483_648 }, 'lease'],
  ])('refuses %p with a typed error naming %s', (options, field) => {
    expect(() => Idempotent(options)).toThrow(InvalidTenantQueueOptionsError);
    expect(() => Idempotent(options)).toThrow(`@Idempotent option "${field}"`);
  });
});
