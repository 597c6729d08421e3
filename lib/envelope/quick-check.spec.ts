import {
  IsDefined,
  IsOptional,
  IsString,
  Length,
  ValidateIf,
  ValidateNested,
  validateSync,
} from 'class-validator';
import { compileQuickCheck } from './quick-check';
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
];

describe('compileQuickCheck (the envelope DTO)', () => {
  const quick = compileQuickCheck(TenantEnvelopeDto)!;

  it('compiles the envelope DTO', () => {
    expect(quick).toBeInstanceOf(Function);
  });

  it('agrees with validateSync on every field x variant and on the valid envelope', () => {
    expect(quick(dtoOf(valid))).toBe(true);
    let disagreements = 0;
    let refused = 0;
    for (const field of Object.keys(valid)) {
      for (const value of variants) {
        const dto = dtoOf({ ...valid, [field]: value });
        const full = validateSync(dto, { forbidUnknownValues: true }).length === 0;
        if (quick(dto) !== full) disagreements++;
        if (!full) refused++;
      }
    }
    expect(disagreements).toBe(0);
    // The variants really exercise refusals, not only the happy path.
    expect(refused).toBeGreaterThan(200);
  });

  it('agrees with validateSync on minimal envelopes (optional fields absent)', () => {
    const { v, tenantId, actorType, enqueuedAt, correlationId } = valid;
    const minimal = { v, tenantId, actorType, enqueuedAt, correlationId };
    expect(quick(dtoOf(minimal))).toBe(true);
    for (const field of Object.keys(minimal)) {
      const dto = dtoOf({ ...minimal, [field]: undefined });
      expect(quick(dto)).toBe(validateSync(dto).length === 0);
      expect(quick(dto)).toBe(false);
    }
  });
});

describe('compileQuickCheck (what it leaves to validateSync)', () => {
  it('does not compile nested, grouped, each or @IsDefined validation', () => {
    class Nested {
      @ValidateNested() child!: object;
    }
    class Grouped {
      @IsString({ groups: ['a'] }) name!: string;
    }
    class Each {
      @IsString({ each: true }) names!: string[];
    }
    class Defined {
      @IsDefined() name!: string;
    }
    for (const dto of [Nested, Grouped, Each, Defined]) {
      expect(compileQuickCheck(dto)).toBeUndefined();
    }
    expect(compileQuickCheck(class Empty {})).toBeUndefined();
  });

  it('honours @IsOptional and @ValidateIf like validateSync', () => {
    class Conditional {
      @IsOptional() @IsString() @Length(2, 3) code?: unknown;
      @ValidateIf((o: Conditional) => o.code === 'xx') @IsString() reason?: unknown;
    }
    const quick = compileQuickCheck(Conditional)!;
    const cases: Partial<Conditional>[] = [
      {},
      { code: null },
      { code: 'x' },
      { code: 'xx' },
      { code: 'xx', reason: 'because' },
      { code: 'xy', reason: 7 },
      { code: 42 },
    ];
    for (const fields of cases) {
      const dto = Object.assign(new Conditional(), fields);
      expect([fields, quick(dto)]).toEqual([fields, validateSync(dto).length === 0]);
    }
  });
});
