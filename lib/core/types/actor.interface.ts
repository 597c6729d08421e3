/**
 * Who caused a job. `system` is work the application starts itself (`addForTenant`, cron);
 * `anonymous` is a request that carried a tenant but no authenticated actor.
 */
export type ActorType = 'user' | 'api_key' | 'system' | 'anonymous';

export const ACTOR_TYPES: readonly ActorType[] = ['user', 'api_key', 'system', 'anonymous'];

export interface TenantActor {
  type: ActorType;
  /** Stable id of the user or API key; absent for `system` and `anonymous`. */
  id?: string;
}
