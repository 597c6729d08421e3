import { tenantKeyPart } from '../core/context/tenant-key';
import {
  DEFAULT_DEAD_LETTER_CAP,
  DeadLetterQueueOptions,
} from './dead-letter-queue-options.interface';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { RedisClient } from '../core/redis/tenant-queue.redis';
import { LuaScripts } from '../core/redis/lua-scripts';

/** Letters a purge-all removes per script call. */
const PURGE_BATCH = 1000;

const SCRIPTS = new LuaScripts<Record<string, (...args: unknown[]) => Promise<any>>>(__dirname, {
  tqDlqRecord: { numberOfKeys: 6, file: 'dead-letter-record.lua' },
  tqDlqRemove: { numberOfKeys: 4, file: 'dead-letter-remove.lua' },
  tqDlqResolve: { numberOfKeys: 5, file: 'dead-letter-resolve.lua' },
});

/** @internal Keys and scripts of the dead-letter store (all under the queue's hash tag). */
export class DeadLettersScript {
  constructor(private readonly client: () => RedisClient) {}

  /** The tenant's index, entries and resolutions. */
  static tenantKeys(definition: TenantQueueDefinition, tenantId: string): [string, string, string] {
    const index = `${definition.bullPrefix}:~dlq:${tenantKeyPart(tenantId)}`;
    return [index, `${index}:entries`, `${index}:resolved`];
  }

  /** Hash job id -> tenant id of the letters whose job may still complete by another path. */
  static openKey(definition: TenantQueueDefinition): string {
    return `${definition.bullPrefix}:~dlq-open`;
  }

  static completedKey(definition: TenantQueueDefinition): string {
    return `${definition.bullPrefix}:${definition.name}:completed`;
  }

  static failedKey(definition: TenantQueueDefinition): string {
    return `${definition.bullPrefix}:${definition.name}:failed`;
  }

  static jobKey(definition: TenantQueueDefinition, jobId: string): string {
    return `${definition.bullPrefix}:${definition.name}:${jobId}`;
  }

  static sweptKey(definition: TenantQueueDefinition): string {
    return `${definition.bullPrefix}:~dlq-swept`;
  }

  /** 1 recorded now, 0 already recorded, -1 not failed for good. */
  async record(
    definition: TenantQueueDefinition,
    tenantId: string,
    jobId: string,
    finishedOn: number,
    json: string,
    final: boolean,
  ): Promise<number> {
    return this.redis().tqDlqRecord(
      DeadLettersScript.jobKey(definition, jobId),
      DeadLettersScript.failedKey(definition),
      ...DeadLettersScript.tenantKeys(definition, tenantId),
      DeadLettersScript.openKey(definition),
      jobId,
      finishedOn,
      json,
      (definition.registered as DeadLetterQueueOptions).deadLetterCap ?? DEFAULT_DEAD_LETTER_CAP,
      final ? '1' : '0',
      tenantId,
    );
  }

  /** One letter (`jobId`), or up to `batch` of the tenant's, the oldest (`jobId` ''). */
  async remove(
    definition: TenantQueueDefinition,
    tenantId: string,
    jobId = '',
    batch = PURGE_BATCH,
  ): Promise<number> {
    return this.redis().tqDlqRemove(
      ...DeadLettersScript.tenantKeys(definition, tenantId),
      DeadLettersScript.openKey(definition),
      jobId,
      batch,
      tenantId,
    );
  }

  /**
   * Every letter of the tenant on the queue, `PURGE_BATCH` a script call, so no call holds Redis
   * long (at most one more call than the letters it found at the start took, however many are
   * recorded meanwhile).
   */
  async removeAll(definition: TenantQueueDefinition, tenantId: string): Promise<number> {
    const [index] = DeadLettersScript.tenantKeys(definition, tenantId);
    const calls = Math.ceil((await this.redis().zcard(index)) / PURGE_BATCH) + 1;
    let removed = 0;
    for (let call = 0; call < calls; call++) {
      const count = await this.remove(definition, tenantId, '', PURGE_BATCH);
      removed += count;
      if (count < PURGE_BATCH) break;
    }
    return removed;
  }

  /**
   * 1 resolved now (the job completed), 0 still open, -1 not watched (resolved, replayed, purged,
   * or its job removed with no sign of completion). `completed`: the caller saw it complete.
   */
  async resolve(
    definition: TenantQueueDefinition,
    tenantId: string,
    jobId: string,
    completed: boolean,
  ): Promise<number> {
    const [, entries, resolved] = DeadLettersScript.tenantKeys(definition, tenantId);
    return this.redis().tqDlqResolve(
      DeadLettersScript.jobKey(definition, jobId),
      DeadLettersScript.completedKey(definition),
      entries,
      resolved,
      DeadLettersScript.openKey(definition),
      jobId,
      tenantId,
      Date.now(),
      completed ? '1' : '0',
    );
  }

  get raw(): any {
    return this.redis();
  }

  private redis(): any {
    return SCRIPTS.on(this.client());
  }
}
