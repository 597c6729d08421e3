import { InvalidEnvelopeError, InvalidTenantIdError } from '../errors';
import { resolveTenantQueueOptions } from '../options/core.options';
import { TenantEnvelopeCodec } from './tenant-envelope.codec';

const codec = new TenantEnvelopeCodec(
  resolveTenantQueueOptions({ connection: {}, environment: 'prod' }),
);

describe('TenantEnvelopeCodec', () => {
  it("words a refused tenant id by the app's pattern: the default's advice only for the default", () => {
    expect(() => codec.assertTenantId('has space')).toThrow(
      /must match .*\. Use 1-64 characters of letters, digits/,
    );
    const custom: TenantEnvelopeCodec = new TenantEnvelopeCodec(
      resolveTenantQueueOptions({ connection: {}, tenantIdPattern: /^[a-z]{2,10}$/ }),
    );
    let message = '';
    try {
      custom.assertTenantId('ACME');
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidTenantIdError);
      message = (error as Error).message;
    }
    expect(message).toBe(
      'Invalid tenant id "ACME": it must match /^[a-z]{2,10}$/ (the app\'s tenantIdPattern), be at most 64 characters and hold no unpaired UTF-16 surrogate.',
    );
  });

  it('builds a complete, valid envelope from a context', () => {
    const envelope = codec.create({
      tenantId: 'acme',
      actor: { type: 'api_key', id: 'key-1' },
      correlationId: 'c-1',
      locale: 'fr-CA',
      strategy: 'header',
    });
    expect(envelope).toEqual({
      v: 1,
      tenantId: 'acme',
      actorType: 'api_key',
      actorId: 'key-1',
      enqueuedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      correlationId: 'c-1',
      locale: 'fr-CA',
      environment: 'prod',
      strategy: 'header',
    });
    expect(codec.open(JSON.parse(JSON.stringify(envelope)))).toEqual(envelope);
  });

  it('defaults the actor to system and makes a correlation id', () => {
    const envelope = codec.create({ tenantId: 'acme' });
    expect(envelope.actorType).toBe('system');
    expect(envelope.correlationId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each([
    ['unknown field', { extra: 1 }],
    ['locale injection', { locale: 'en"; DROP' }],
    ['non-ASCII actor', { actorId: 'ü' }],
    ['empty correlation id', { correlationId: '' }],
    ['strategy outside the list', { strategy: 'cookie' }],
    ['signature of the wrong length', { sig: 'abc' }],
    ['date without zone', { enqueuedAt: '2026-01-01T00:00:00' }],
  ])('refuses %s', (_label, patch) => {
    const envelope = { ...codec.create({ tenantId: 'acme' }), ...patch };
    expect(() => codec.open(envelope)).toThrow(InvalidEnvelopeError);
  });

  // class-validator's messages name the field already: it read "actorType actorType must be ...".
  it("words a refused field once, in the DTO's words", () => {
    const envelope = { ...codec.create({ tenantId: 'acme' }), actorType: 'robot' };
    expect(() => codec.open(envelope)).toThrow(
      'The job\'s "_tenant" envelope is invalid: actorType must be one of the following values: ' +
        'user, api_key, system, anonymous. The job was not run.',
    );
    const late = { ...codec.create({ tenantId: 'acme' }), enqueuedAt: '2024-19-39T29:59:59Z' };
    expect(() => codec.open(late)).toThrow(
      'envelope is invalid: enqueuedAt must be a real instant (no month 13, day 31 in April, hour 24).',
    );
  });

  it('never lets a __proto__ key through', () => {
    const raw = JSON.parse(
      `{"__proto__":{"x":1},${JSON.stringify(codec.create({ tenantId: 'a' })).slice(1)}`,
    );
    expect(() => codec.open(raw)).toThrow(/unknown field "__proto__"/);
  });

  it('asserts tenant ids against the pattern', () => {
    expect(() => codec.assertTenantId('ok-1')).not.toThrow();
    expect(() => codec.assertTenantId('no/slash')).toThrow(InvalidTenantIdError);
    expect(() => codec.assertTenantId(42)).toThrow(InvalidTenantIdError);
  });
});
