import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { ACTOR_TYPES, ActorType } from '../interfaces/actor.interface';
import { TenantEnvelope, TenantResolutionStrategy } from '../interfaces/tenant-envelope.interface';

export const STRATEGIES: readonly TenantResolutionStrategy[] = [
  'header',
  'subdomain',
  'jwtClaim',
  'pathParam',
  'custom',
  'system',
  'inherited',
  'explicit',
];

const SAFE_TEXT = /^[\x21-\x7e]+$/;
/** A UTC instant as `Date.prototype.toISOString()` writes it. */
const ISO_INSTANT = /^\d{4}-[01]\d-[0-3]\dT[0-2]\d:[0-5]\d:[0-5]\d(\.\d{1,3})?Z$/;

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
  @Matches(ISO_INSTANT) enqueuedAt!: string;
  @IsString() @Length(1, 128) @Matches(SAFE_TEXT) correlationId!: string;
  @IsOptional()
  @Matches(/^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8}){0,4}$/)
  locale?: string;
  @IsOptional()
  @IsString()
  @Length(1, 32)
  @Matches(SAFE_TEXT)
  environment?: string;
  @IsOptional() @IsIn(STRATEGIES) strategy?: TenantResolutionStrategy;
  @IsOptional() @Matches(TRACEPARENT) traceparent?: string;
  @IsOptional() @Matches(/^[A-Za-z0-9_-]{43}$/) sig?: string;
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
  'sig',
];
