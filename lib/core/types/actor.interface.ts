/**
 * Who caused a job. `system` is work the application starts itself (`addForTenant`, cron);
 * `anonymous` is a request that carried a tenant but no authenticated actor.
 * @publicApi
 */
export type ActorType = 'user' | 'api_key' | 'system' | 'anonymous';

/**
 * Every `ActorType`, in one list.
 * @publicApi
 */
export const ACTOR_TYPES: readonly ActorType[] = ['user', 'api_key', 'system', 'anonymous'];

/**
 * Who caused the work: its type and, for a user or API key, its id.
 * @publicApi
 */
export interface TenantActor {
  type: ActorType;
  /** Stable id of the user or API key; absent for `system` and `anonymous`. */
  id?: string;
}
