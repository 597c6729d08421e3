import { randomUUID } from 'node:crypto';
import {
  ArrayNotEmpty,
  IsIn,
  IsArray,
  IsBoolean,
  IsDefined,
  IsInstance,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidationError,
  validateSync,
} from 'class-validator';
import {
  DEFAULT_CORRELATION_HEADER,
  DEFAULT_JWT_CLAIM,
  DEFAULT_PATH_PARAM,
  DEFAULT_PREFIX,
  DEFAULT_TENANT_HEADER,
  DEFAULT_TENANT_ID_PATTERN,
  MAX_TENANT_ID_LENGTH,
} from '../../tenant-queue.constants';
import { InvalidTenantQueueOptionsError } from '../errors';
import { ResolvedEnvelopeOptions, resolveEnvelopeOptions } from './envelope.options';
import { Messages } from '../../tenant-queue.messages';
import { TenantTierOptions } from '../types/tenant-tier-options.interface';
import { resolveTierCacheMs, resolveTiers } from './tiers.options';
import { TenantActor } from '../types/actor.interface';
import type { Telemetry } from 'bullmq';
import {
  CoreModuleOptions,
  ResolvedResolutionOptions,
  TenantResolverName,
} from '../types/core-options.interface';
import { RESOLUTION_STRATEGIES } from '../resolution/strategies';
import {
  firstUnknownOption,
  schemaOptionNames,
  unknownOptionWhy,
  validationWhy,
} from './option-names';
import { TenantQueueLogger } from '../logging/tenant-queue-logger';

/** Every strategy name `resolution.order` accepts. */
export const RESOLVER_NAMES = Object.keys(RESOLUTION_STRATEGIES) as TenantResolverName[];

/** Module options after validation, with every default filled in. */
export interface ResolvedTenantQueueOptions {
  connection: CoreModuleOptions['connection'];
  prefix: string;
  tenantIdPattern: RegExp;
  resolution: ResolvedResolutionOptions;
  resolveActor: (req: any) => TenantActor | undefined;
  resolveLocale: (req: any) => string | undefined;
  correlationHeader: string;
  environment?: string;
  globalEnhancers: boolean;
  newCorrelationId: () => string;
  envelope: ResolvedEnvelopeOptions;
  tiers: Readonly<Record<string, TenantTierOptions>>;
  tierCacheMs: number;
  enqueueTimeoutMs: number;
  redisAtBoot: 'optional' | 'required';
  shutdownTimeoutMs: number;
  /** BullMQ's telemetry as given (the telemetry feature validates it and tags spans). */
  telemetry: Telemetry | undefined;
}

const DEFAULT_ENQUEUE_TIMEOUT_MS = 5000;
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

const IsCallable = () =>
  ValidateBy({
    name: 'isCallable',
    validator: {
      validate: (value) => typeof value === 'function',
      defaultMessage: () => 'must be a function',
    },
  });

const HEADER = /^[a-z0-9-]{1,64}$/i;
/** A DNS host name: dot-separated labels of letters, digits and inner hyphens. */
const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

class ResolutionSchema {
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @IsIn(RESOLVER_NAMES, { each: true })
  order?: TenantResolverName[];
  @IsOptional() @Matches(HEADER) header?: string;
  @IsOptional() @IsString() @MaxLength(64) jwtClaim?: string;
  @IsOptional() @IsString() @MaxLength(64) pathParam?: string;
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  subdomainBaseDomains?: string[];
  @IsOptional() @IsCallable() custom?: unknown;
  @IsOptional() @IsBoolean() mount?: boolean;
}

class OptionsSchema {
  @IsDefined() connection!: unknown;
  @IsOptional() @Matches(/^[A-Za-z0-9_.-]{1,32}$/) prefix?: string;
  @IsOptional() resolution?: unknown;
  @IsOptional() @IsInstance(RegExp) tenantIdPattern?: RegExp;
  @IsOptional() @IsCallable() resolveActor?: unknown;
  @IsOptional() @IsCallable() resolveLocale?: unknown;
  @IsOptional() @Matches(HEADER) correlationHeader?: string;
  @IsOptional() @IsString() @MaxLength(32) environment?: string;
  @IsOptional() @IsBoolean() globalEnhancers?: boolean;
  @IsOptional() envelope?: unknown;
  @IsOptional() tiers?: unknown;
  @IsOptional() tierCacheMs?: unknown;
  @IsOptional() @IsInt() @Min(100) @Max(600_000) enqueueTimeoutMs?: number;
  @IsOptional() @IsIn(['optional', 'required']) redisAtBoot?: string;
  @IsOptional() @IsInt() @Min(100) @Max(600_000) shutdownTimeoutMs?: number;
  @IsOptional() telemetry?: unknown;
  @IsOptional() cls?: unknown;
}

/**
 * @internal The names of the features' slices of `forRoot`'s options (`scheduler`, the ports...),
 * given by the module that composes them: the kernel checks only its own fields, and refuses a
 * name that is neither its own nor one of these.
 */
export const TENANT_QUEUE_FEATURE_OPTIONS = Symbol('TENANT_QUEUE_FEATURE_OPTIONS');

function check(schema: object, input: object, path: string): void {
  const errors = validateSync(Object.assign(schema, input), {
    whitelist: true,
    forbidNonWhitelisted: true,
  });
  if (errors.length > 0) throw toOptionsError(errors[0], path);
}

function toOptionsError(error: ValidationError, path: string): InvalidTenantQueueOptionsError {
  const field = `${path}${error.property}`;
  return new InvalidTenantQueueOptionsError(Messages.invalidOptions(field, validationWhy(error)));
}

const LOCALE = /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8}){0,4}$/;

export function defaultResolveLocale(req: any): string | undefined {
  const header = req?.headers?.['accept-language'];
  if (typeof header !== 'string') return undefined;
  const first = header.split(',')[0]?.split(';')[0]?.trim();
  return first && LOCALE.test(first) ? first : undefined;
}

export function defaultResolveActor(req: any): TenantActor | undefined {
  const user = req?.user;
  const id = user?.id ?? user?.sub;
  if (id === undefined || id === null) return { type: 'anonymous' };
  return { type: 'user', id: String(id) };
}

/** Validates the module options once and fills in defaults. Throws on the first bad field. */
export function resolveTenantQueueOptions(
  options: CoreModuleOptions,
  featureOptions: readonly string[] = [],
): ResolvedTenantQueueOptions {
  if (!options || typeof options !== 'object') {
    throw new InvalidTenantQueueOptionsError(
      Messages.invalidOptions('(root)', 'must be an object'),
    );
  }
  const known = [...schemaOptionNames(new OptionsSchema()), ...featureOptions];
  const unknown = firstUnknownOption(options, known);
  if (unknown !== undefined) {
    throw new InvalidTenantQueueOptionsError(
      Messages.invalidOptions(unknown, unknownOptionWhy(unknown, known)),
    );
  }
  const kernelOptions = Object.fromEntries(
    Object.entries(options).filter(([name]) => !featureOptions.includes(name)),
  );
  check(new OptionsSchema(), kernelOptions, '');
  const resolution = options.resolution ?? {};
  check(new ResolutionSchema(), resolution, 'resolution.');
  const order = resolution.order ?? ['header'];
  if (order.includes('custom') && !resolution.custom) {
    throw new InvalidTenantQueueOptionsError(
      Messages.invalidOptions('resolution.custom', 'is required when order includes "custom"'),
    );
  }
  if (
    typeof resolution.custom === 'function' &&
    resolution.custom.constructor?.name === 'AsyncFunction'
  ) {
    throw new InvalidTenantQueueOptionsError(
      Messages.invalidOptions(
        'resolution.custom',
        'is an async function; it must return the tenant id (a string) or undefined synchronously, ' +
          'as the tenant is resolved before the route runs',
      ),
    );
  }
  for (const base of resolution.subdomainBaseDomains ?? []) {
    if (!HOST_NAME.test(base)) {
      throw new InvalidTenantQueueOptionsError(
        Messages.invalidOptions(
          'resolution.subdomainBaseDomains',
          `${JSON.stringify(base)} is not a host name, so no request would ever match it; give ` +
            'the bare name, without a leading dot, scheme, port or path (e.g. "app.example.com")',
        ),
      );
    }
  }
  if (options.tenantIdPattern) checkTenantIdPattern(options.tenantIdPattern);
  return {
    connection: options.connection,
    prefix: options.prefix ?? DEFAULT_PREFIX,
    tenantIdPattern: options.tenantIdPattern ?? DEFAULT_TENANT_ID_PATTERN,
    resolution: {
      order,
      header: (resolution.header ?? DEFAULT_TENANT_HEADER).toLowerCase(),
      jwtClaim: resolution.jwtClaim ?? DEFAULT_JWT_CLAIM,
      pathParam: resolution.pathParam ?? DEFAULT_PATH_PARAM,
      subdomainBaseDomains: (resolution.subdomainBaseDomains ?? []).map((d) => d.toLowerCase()),
      custom: resolution.custom,
      mount: resolution.mount ?? true,
    },
    resolveActor: options.resolveActor ?? defaultResolveActor,
    resolveLocale: options.resolveLocale ?? defaultResolveLocale,
    correlationHeader: (options.correlationHeader ?? DEFAULT_CORRELATION_HEADER).toLowerCase(),
    environment: options.environment,
    globalEnhancers: options.globalEnhancers ?? false,
    newCorrelationId: randomUUID,
    envelope: resolveEnvelopeOptions(options.envelope),
    tiers: resolveTiers(options.tiers),
    tierCacheMs: resolveTierCacheMs(options.tierCacheMs),
    enqueueTimeoutMs: options.enqueueTimeoutMs ?? DEFAULT_ENQUEUE_TIMEOUT_MS,
    redisAtBoot: options.redisAtBoot ?? 'optional',
    shutdownTimeoutMs: options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS,
    telemetry: options.telemetry,
  };
}

export const TENANT_QUEUE_OPTIONS = Symbol('TENANT_QUEUE_OPTIONS');

/**
 * `forRoot`'s options as given (`TenantQueueModuleOptions`): the kernel resolves its own part
 * (`TENANT_QUEUE_OPTIONS`), each feature module its own slice.
 */
export const TENANT_QUEUE_MODULE_OPTIONS = Symbol('TENANT_QUEUE_MODULE_OPTIONS');

/**
 * @internal The options the kernel runs with (the first `forRoot` imported, as the kernel sees
 * `TENANT_QUEUE_MODULE_OPTIONS`): each `forRoot` compares its own with them.
 */
export const TENANT_QUEUE_KERNEL_MODULE_OPTIONS = Symbol('TENANT_QUEUE_KERNEL_MODULE_OPTIONS');

const LONG_PROBES = ['a', 'A', '0', '_', '-', '.', 'é'].map((c) =>
  c.repeat(MAX_TENANT_ID_LENGTH + 1),
);

/** Refuses a stateful pattern; warns (once, at boot) when it admits ids the envelope cannot carry. */
function checkTenantIdPattern(pattern: RegExp): void {
  if (pattern.global || pattern.sticky) {
    throw new InvalidTenantQueueOptionsError(
      Messages.invalidOptions('tenantIdPattern', Messages.tenantIdPatternStateful(pattern)),
    );
  }
  if (LONG_PROBES.some((probe) => pattern.test(probe))) {
    new TenantQueueLogger('TenantQueue').warn(
      Messages.tenantIdPatternTooLong(pattern, MAX_TENANT_ID_LENGTH),
    );
  }
}
