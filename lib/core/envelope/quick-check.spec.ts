import { validateSync } from 'class-validator';
import { isEnvelopeShape, isUtcInstant } from './quick-check';
import { TenantEnvelopeDto } from './tenant-envelope.dto';

function dtoOf(fields: Record<string, unknown>): TenantEnvelopeDto {
  return Object.assign(new TenantEnvelopeDto(), fields);
}

const valid = {
  v: 1,
  tenantId: 'acme',
  actorType: 'user',
  actorId: 'user-1',
  enqueuedAt: '2026-11-30T23:00:00.123Z',
  correlationId: '0f8e5d4c-1111-4222-8333-944445555666',
  locale: 'fr-CA',
  environment: 'prod',
  strategy: 'header',
  traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  fairKey: 'user-1',
  sig: 'A'.repeat(43),
};

/** Values each field may be replaced with: right and wrong types, bounds, patterns, absence. */
const variants: unknown[] = [
  undefined,
  null,
  '',
  ' ',
  'x',
  'a'.repeat(32),
  'a'.repeat(33),
  'a'.repeat(64),
  'a'.repeat(65),
  'a'.repeat(128),
  'a'.repeat(129),
  'A'.repeat(43),
  'ü',
  'en"; DROP',
  'en-US',
  'toolonglocale',
  0,
  1,
  2,
  true,
  {},
  [],
  ['acme'],
  '2026-11-30T23:00:00Z',
  '2026-11-30T23:00:00',
  '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
  'user',
  'system',
  'api_key',
  'cookie',
  'inherited',
  // Instants: real, impossible though the pattern admits them, leap days, fractions.
  '2024-19-39T29:59:59Z',
  '2024-02-30T00:00:00Z',
  '2024-02-29T23:59:59.999Z',
  '2023-02-29T00:00:00Z',
  '1900-02-29T00:00:00Z',
  '2000-02-29T00:00:00Z',
  '2026-04-31T00:00:00Z',
  '2026-12-31T24:00:00Z',
  '2026-00-10T00:00:00Z',
  '2026-11-30T23:00:00.5Z',
  '2026-11-30T23:00:00.1234Z',
  '2026-11-30T23:00:00.Z',
  '2026-11-30T23:60:00Z',
  '0000-01-01T00:00:00Z',
  // Lengths as class-validator counts them: surrogate pairs and variation selectors.
  '😀'.repeat(64),
  '😀'.repeat(65),
  '\u2764\ufe0f'.repeat(64),
  '\u2764\ufe0f'.repeat(65),
  '\ud83d\ude00\ufe0f'.repeat(40),
  '\ufe0f'.repeat(3),
  '\ud800'.repeat(64),
  'a'.repeat(200),
];

/** What the DTO says of `fields` (the codec refuses unknown fields before the DTO). */
function dtoAccepts(fields: Record<string, unknown>): boolean {
  return validateSync(dtoOf(fields), { forbidUnknownValues: true }).length === 0;
}

describe('isEnvelopeShape (the hand-written envelope guard)', () => {
  it('agrees with validateSync on the DTO on every field x variant and on the valid envelope', () => {
    expect(isEnvelopeShape(valid)).toBe(true);
    let disagreements = 0;
    let refused = 0;
    const seen: string[] = [];
    for (const field of Object.keys(valid)) {
      for (const value of variants) {
        const fields = { ...valid, [field]: value };
        const full = dtoAccepts(fields);
        if (isEnvelopeShape(fields) !== full) seen.push(`${field}=${JSON.stringify(value)}`);
        if (isEnvelopeShape(fields) !== full) disagreements++;
        if (!full) refused++;
      }
    }
    expect(seen).toEqual([]);
    expect(disagreements).toBe(0);
    // The variants really exercise refusals, not only the happy path.
    expect(refused).toBeGreaterThan(300);
  });

  it('agrees with validateSync on minimal envelopes (optional fields absent)', () => {
    const { v, tenantId, actorType, enqueuedAt, correlationId } = valid;
    const minimal = { v, tenantId, actorType, enqueuedAt, correlationId };
    expect(isEnvelopeShape(minimal)).toBe(true);
    for (const field of Object.keys(minimal)) {
      const fields = { ...minimal, [field]: undefined };
      expect(isEnvelopeShape(fields)).toBe(dtoAccepts(fields));
      expect(isEnvelopeShape(fields)).toBe(false);
      const without: Record<string, unknown> = { ...minimal };
      delete without[field];
      expect(isEnvelopeShape(without)).toBe(false);
    }
  });

  it('refuses unknown fields, __proto__, inherited keys and non-objects', () => {
    expect(isEnvelopeShape({ ...valid, extra: 1 })).toBe(false);
    expect(isEnvelopeShape(JSON.parse(`{"__proto__": {}, "v": 1}`))).toBe(false);
    expect(isEnvelopeShape(Object.assign(Object.create({ inherited: 1 }), valid))).toBe(false);
    for (const value of [null, undefined, 'x', 1, [], [valid]]) {
      expect(isEnvelopeShape(value)).toBe(false);
    }
  });

  it('accepts exactly the instants Date writes back unchanged', () => {
    const instants = variants.filter(
      (v): v is string => typeof v === 'string' && /^\d{4}-/.test(v),
    );
    for (let day = 0; day < 1_500; day++) {
      instants.push(new Date(Date.UTC(1999, 0, 1) + day * 86_400_000 + day * 977).toISOString());
    }
    for (const instant of instants) {
      const time = Date.parse(instant);
      const real =
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?Z$/.test(instant) &&
        !Number.isNaN(time) &&
        new Date(time).toISOString().slice(0, 19) === instant.slice(0, 19);
      expect([instant, isUtcInstant(instant)]).toEqual([instant, real]);
    }
  });
});
