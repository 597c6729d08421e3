import { IsInt, IsOptional, Max, Min, validateSync } from 'class-validator';
import { InvalidTenantQueueOptionsError } from '../core/errors';
import { TenantGuardOptions } from './tenant-guard-options.interface';
import { Messages } from '../tenant-queue.messages';
import { validationWhy } from '../core/options/option-names';
import { DEFAULT_PORT_TIMEOUT_MS } from '../core/tenants/directory-lookup';

/** `guards` option after validation, defaults filled in. */
export interface ResolvedGuardOptions {
  tenantCacheTtlMs: number;
  portTimeoutMs: number;
}

export const MAX_TENANT_CACHE_TTL_MS = 30_000;

class GuardSchema {
  @IsOptional() @IsInt() @Min(0) @Max(MAX_TENANT_CACHE_TTL_MS) tenantCacheTtlMs?: number;
  @IsOptional() @IsInt() @Min(1) @Max(120_000) portTimeoutMs?: number;
}

export function resolveGuardOptions(input: TenantGuardOptions | undefined): ResolvedGuardOptions {
  if (input !== undefined && (input === null || typeof input !== 'object')) {
    throw new InvalidTenantQueueOptionsError(
      Messages.invalidOptions('guards', 'must be an object'),
    );
  }
  const errors = validateSync(Object.assign(new GuardSchema(), input ?? {}), {
    whitelist: true,
    forbidNonWhitelisted: true,
  });
  if (errors.length > 0) {
    throw new InvalidTenantQueueOptionsError(
      Messages.invalidOptions(`guards.${errors[0].property}`, validationWhy(errors[0])),
    );
  }
  return {
    tenantCacheTtlMs: input?.tenantCacheTtlMs ?? 0,
    portTimeoutMs: input?.portTimeoutMs ?? DEFAULT_PORT_TIMEOUT_MS,
  };
}

/** The `guards` slice of the module options, resolved once (see `resolveGuardOptions`). */
export const TENANT_GUARD_OPTIONS = Symbol('TENANT_GUARD_OPTIONS');
