import { SetMetadata } from '@nestjs/common';
import { REQUIRES_ACTOR_PERMISSION_METADATA } from './job-guards.constants';

/**
 * On a `@TenantProcessor` class or its `process` method: before each job caused by a `user` or
 * `api_key`, that actor must still hold every listed permission in the job's tenant
 * (`ActorPermissionChecker.can`), or the job is cancelled with `ACTOR_NOT_PERMITTED`. `system`
 * work passes; `anonymous` work is refused. Class and method lists add up, with those of
 * the classes it extends and their `process` (an override keeps them).
 * @publicApi
 */
export const RequiresActorPermission = (permission: string, ...more: string[]) =>
  SetMetadata(REQUIRES_ACTOR_PERMISSION_METADATA, [permission, ...more]);
