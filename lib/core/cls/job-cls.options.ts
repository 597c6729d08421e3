import { InvalidTenantQueueOptionsError } from '../errors';
import { TenantJob } from '../types/tenant-job.interface';
import { Messages } from '../../tenant-queue.messages';
import { TenantJobClsOptions } from '../types/job-cls-options.interface';

/** @internal `options.cls` after validation, with defaults. */
export interface ResolvedJobClsOptions {
  setup: TenantJobClsOptions['setup'];
  /** undefined: follow the app's `ClsModule` options. */
  generateId: boolean | undefined;
  idGenerator: ((job: TenantJob) => string) | undefined;
  resolveProxyProviders: boolean;
  initializePlugins: boolean;
}

const FIELDS: Record<keyof TenantJobClsOptions, 'function' | 'boolean'> = {
  setup: 'function',
  generateId: 'boolean',
  idGenerator: 'function',
  resolveProxyProviders: 'boolean',
  initializePlugins: 'boolean',
};

/** Validates `options.cls`; throws naming the first bad field. */
export function resolveJobClsOptions(
  options: { cls?: unknown } | undefined,
): ResolvedJobClsOptions {
  const raw = options?.cls ?? {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new InvalidTenantQueueOptionsError(Messages.invalidOptions('cls', 'must be an object'));
  }
  for (const [field, value] of Object.entries(raw)) {
    const type = FIELDS[field as keyof TenantJobClsOptions];
    if (!type) {
      const known = Object.keys(FIELDS).join(', ');
      throw new InvalidTenantQueueOptionsError(
        Messages.invalidOptions(`cls.${field}`, `is not an option (known: ${known})`),
      );
    }
    if (value !== undefined && typeof value !== type) {
      throw new InvalidTenantQueueOptionsError(
        Messages.invalidOptions(`cls.${field}`, `must be a ${type}`),
      );
    }
  }
  const cls = raw as TenantJobClsOptions;
  return {
    setup: cls.setup,
    generateId: cls.generateId,
    idGenerator: cls.idGenerator,
    resolveProxyProviders: cls.resolveProxyProviders ?? true,
    initializePlugins: cls.initializePlugins ?? true,
  };
}
