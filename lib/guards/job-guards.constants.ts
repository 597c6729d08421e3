export const REQUIRES_ENTITLEMENT_METADATA = 'tenant-queue:requires-entitlement';
export const REQUIRES_ACTOR_PERMISSION_METADATA = 'tenant-queue:requires-actor-permission';

/** Order of the module's own job guards among the job stages (before timeouts and idempotency). */
export const JOB_GUARDS_STAGE_ORDER = 100;
