import { InvalidEnvelopeError, InvalidTenantQueueOptionsError } from '../errors';
import { TenantEnvelope } from '../types/tenant-envelope.interface';
import { resolveTenantQueueOptions } from '../options/core.options';
import { canonicalEnvelope } from './envelope-signature';
import { TenantEnvelopeCodec } from './tenant-envelope.codec';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);

function codec(secret?: string | string[]): TenantEnvelopeCodec {
  return new TenantEnvelopeCodec(
    resolveTenantQueueOptions({ connection: {}, envelope: secret ? { secret } : undefined }),
  );
}

function signed(secret: string | string[] = A): TenantEnvelope {
  return codec(secret).create({
    tenantId: 't-1',
    actor: { type: 'user', id: 'u-1' },
    correlationId: 'corr-1',
    locale: 'en-GB',
    strategy: 'header',
  });
}

describe('TenantEnvelopeCodec signing', () => {
  it('signs with the first secret and verifies with any listed one', () => {
    const envelope = signed([A, B]);
    expect(envelope.sig).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(codec([A, B]).open(envelope)).toEqual(envelope);
    expect(codec([B, A]).open(envelope)).toEqual(envelope);
    expect(() => codec(B).open(envelope)).toThrow(/signature does not match/);
  });

  it('does not depend on the key order the envelope was stored with', () => {
    const envelope = signed();
    const reordered = Object.fromEntries(Object.entries(envelope).reverse());
    expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(envelope));
    expect(codec(A).open(reordered)).toEqual(envelope);
  });

  it.each([
    ['tenantId', 't-2'],
    ['actorId', 'u-2'],
    ['actorType', 'system'],
    ['enqueuedAt', '2020-01-01T00:00:00.000Z'],
    ['correlationId', 'corr-2'],
    ['locale', 'de'],
    ['strategy', 'system'],
    ['environment', 'prod'],
    ['fairKey', 'u-9'],
  ])('refuses an envelope whose %s was changed or added', (field, value) => {
    const envelope = { ...signed(), [field]: value };
    expect(() => codec(A).open(envelope)).toThrow(InvalidEnvelopeError);
  });

  it('refuses a removed field and a removed signature', () => {
    const { actorId: _actorId, ...withoutActor } = signed();
    expect(() => codec(A).open(withoutActor)).toThrow(/signature does not match/);
    const { sig: _sig, ...unsigned } = signed();
    expect(() => codec(A).open(unsigned)).toThrow(/not signed/);
  });

  it('neither signs nor verifies without a secret', () => {
    const envelope = codec().create({ tenantId: 't-1' });
    expect(envelope.sig).toBeUndefined();
    expect(codec().open({ ...signed(), tenantId: 't-2' }).tenantId).toBe('t-2');
  });

  it('signs a canonical form that has every field but sig, in a fixed order', () => {
    const envelope = signed();
    expect(JSON.parse(canonicalEnvelope(envelope))).toEqual([
      'nestjs-tenant-queue:envelope:v1',
      1,
      't-1',
      'u-1',
      'user',
      envelope.enqueuedAt,
      'corr-1',
      'en-GB',
      null,
      'header',
      null,
    ]);
  });

  it('appends fairKey only when set, so envelopes without one sign as before it existed', () => {
    const plain = signed();
    const keyed = codec(A).create({ tenantId: 't-1', actor: { type: 'user', id: 'u-1' } }, 'k-1');
    expect(JSON.parse(canonicalEnvelope(plain))).toHaveLength(11);
    expect(JSON.parse(canonicalEnvelope(keyed))).toHaveLength(12);
    expect(JSON.parse(canonicalEnvelope(keyed))[11]).toBe('k-1');
    expect(codec(A).open(keyed)).toEqual(keyed);
    const { fairKey: _fairKey, ...dropped } = keyed;
    expect(() => codec(A).open(dropped)).toThrow(/signature does not match/);
  });

  it.each([[''], ['short'], [[]], [['x'.repeat(32), 'short']], [42]])(
    'refuses the secret %p at bootstrap',
    (secret) => {
      expect(() =>
        resolveTenantQueueOptions({ connection: {}, envelope: { secret: secret as never } }),
      ).toThrow(InvalidTenantQueueOptionsError);
    },
  );
});
