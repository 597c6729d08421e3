export * from './is-tenant-job-context';
export * from './tenant-required.guard';
export * from './requires-entitlement.decorator';
export * from './requires-actor-permission.decorator';
export * from './use-job-guards.decorator';
export { JobCancellations } from './job-cancellations';
export type { JobCancelledEvent, JobCancelledListener } from './job-cancellations';
export type { TenantGuardOptions } from './tenant-guard-options.interface';
export * from './tenant-queue-ports.interface';
// @internal: for the testing module.
export { PORT_TOKENS, omitPortOptions, portProviders } from './port-providers';
// @internal: for DeadLetters.replay's tenant check.
export { TenantStatusService } from './tenant-status.service';
export { TenantPortUnavailableError } from '../core/errors';
