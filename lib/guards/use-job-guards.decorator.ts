import { CanActivate, UseGuards } from '@nestjs/common';

/**
 * Adds your own Nest guards to a `@TenantProcessor` class or its `process` method. They run after
 * the module's checks, inside the job's tenant context, with `context.getType()` `'tenant-job'`
 * and the job as `context.getArgByIndex(0)`. Returning false cancels the job (`FORBIDDEN`);
 * throwing `JobCancelledError` cancels it with your reason; any other error fails the attempt.
 * @publicApi
 */
export const UseJobGuards = (...guards: (CanActivate | (new (...args: any[]) => CanActivate))[]) =>
  UseGuards(...guards);
