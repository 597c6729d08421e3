import {
  IsIn,
  IsOptional,
  IsString,
  Length,
  Matches,
  ValidateBy,
  ValidationOptions,
  buildMessage,
} from 'class-validator';
import { ACTOR_TYPES, ActorType } from '../types/actor.interface';
import { RESOLUTION_STRATEGIES } from '../resolution/strategies';
import { TenantEnvelope, TenantResolutionStrategy } from '../types/tenant-envelope.interface';

/** How an envelope's tenant may have been found: a resolution strategy, or set by the module. */
export const STRATEGIES: readonly TenantResolutionStrategy[] = [
  ...(Object.keys(RESOLUTION_STRATEGIES) as TenantResolutionStrategy[]),
  'system',
  'inherited',
  'explicit',
];

const SAFE_TEXT = /^[\x21-\x7e]+$/;
/** A UTC instant as `Date.prototype.toISOString()` writes it. */
const ISO_INSTANT = /^\d{4}-[01]\d-[0-3]\dT[0-2]\d:[0-5]\d:[0-5]\d(\.\d{1,3})?Z$/;

/** BCP 47-like language tag. */
export const LOCALE = /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8}){0,4}$/;
/** HMAC-SHA256, base64url without padding. */
export const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;

/**
 * An ISO instant that names a real moment (`2024-19-39T29:59:59Z` matches the pattern, yet no
 * such day exists): the date read back from it writes the same date and time.
 */
function IsRealInstant(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isRealInstant',
      validator: {
        validate: (value: unknown) => {
          if (typeof value !== 'string') return false;
          const time = Date.parse(value);
          return (
            !Number.isNaN(time) && new Date(time).toISOString().slice(0, 19) === value.slice(0, 19)
          );
        },
        defaultMessage: buildMessage(
          (each) =>
            `${each}$property must be a real instant (no month 13, day 31 in April, hour 24)`,
          options,
        ),
      },
    },
    options,
  );
}

/**
 * W3C `traceparent` (version 00): trace id and parent id in lowercase hex, neither all zeros.
 */
export const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** class-validator schema of the `_tenant` envelope; the tenant id pattern is checked apart. */
export class TenantEnvelopeDto implements TenantEnvelope {
  @IsIn([1]) v!: 1;
  @IsString() @Length(1, 64) tenantId!: string;
  @IsOptional()
  @IsString()
  @Length(1, 128)
  @Matches(SAFE_TEXT)
  actorId?: string;
  @IsIn(ACTOR_TYPES) actorType!: ActorType;
  @Matches(ISO_INSTANT) @IsRealInstant() enqueuedAt!: string;
  @IsString() @Length(1, 128) @Matches(SAFE_TEXT) correlationId!: string;
  @IsOptional()
  @Matches(LOCALE)
  locale?: string;
  @IsOptional()
  @IsString()
  @Length(1, 32)
  @Matches(SAFE_TEXT)
  environment?: string;
  @IsOptional() @IsIn(STRATEGIES) strategy?: TenantResolutionStrategy;
  @IsOptional() @Matches(TRACEPARENT) traceparent?: string;
  @IsOptional()
  @IsString()
  @Length(1, 128)
  @Matches(SAFE_TEXT)
  fairKey?: string;
  @IsOptional() @Matches(SIGNATURE) sig?: string;
}

/** Field names an envelope may carry; anything else makes it invalid. */
export const ENVELOPE_FIELDS: readonly (keyof TenantEnvelope)[] = [
  'v',
  'tenantId',
  'actorId',
  'actorType',
  'enqueuedAt',
  'correlationId',
  'locale',
  'environment',
  'strategy',
  'traceparent',
  'fairKey',
  'sig',
];
