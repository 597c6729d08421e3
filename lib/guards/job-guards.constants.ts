export const REQUIRES_ENTITLEMENT_METADATA = 'tenant-queue:requires-entitlement';
export const REQUIRES_ACTOR_PERMISSION_METADATA = 'tenant-queue:requires-actor-permission';
