import { ActorPermissionChecker } from '../core/types/tenant-directory.interface';

/**
 * An `ActorPermissionChecker` kept in memory, for tests and demos: `grant(tenant, actorId, perm)`;
 * `removeMember(tenant, actorId)` takes every permission away. Changes apply to the next job.
 * @publicApi
 */
export class InMemoryActorPermissionChecker implements ActorPermissionChecker {
  private readonly grants = new Map<string, Set<string>>();

  grant(tenantId: string, actorId: string, permission: string): void {
    const key = memberKey(tenantId, actorId);
    const set = this.grants.get(key) ?? new Set<string>();
    set.add(permission);
    this.grants.set(key, set);
  }

  revoke(tenantId: string, actorId: string, permission: string): void {
    this.grants.get(memberKey(tenantId, actorId))?.delete(permission);
  }

  removeMember(tenantId: string, actorId: string): void {
    this.grants.delete(memberKey(tenantId, actorId));
  }

  async can(actor: { id?: string }, permission: string, tenantId: string): Promise<boolean> {
    if (actor.id === undefined) return false;
    return this.grants.get(memberKey(tenantId, actor.id))?.has(permission) ?? false;
  }
}

function memberKey(tenantId: string, actorId: string): string {
  return JSON.stringify([tenantId, actorId]);
}
