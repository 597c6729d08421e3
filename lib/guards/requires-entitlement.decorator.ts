import { SetMetadata } from '@nestjs/common';
import { REQUIRES_ENTITLEMENT_METADATA } from './job-guards.constants';

/**
 * On a `@TenantProcessor` class or its `process` method: before each job, the job's tenant must
 * have every listed feature (`EntitlementChecker.hasEntitlement`), or the job is cancelled with
 * `NOT_ENTITLED`. Class and method lists add up, with those of the classes it extends and
 * their `process` (an override keeps them).
 * @publicApi
 */
export const RequiresEntitlement = (feature: string, ...more: string[]) =>
  SetMetadata(REQUIRES_ENTITLEMENT_METADATA, [feature, ...more]);
