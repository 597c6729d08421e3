import { tenantKeyPart } from '../core/context/tenant-key';
import {
  DEFAULT_DEAD_LETTER_CAP,
  DeadLetterQueueOptions,
} from './dead-letter-queue-options.interface';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { RedisClient } from '../core/redis/tenant-queue.redis';
import { LuaScripts } from '../core/redis/lua-scripts';

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

  async remove(definition: TenantQueueDefinition, tenantId: string, jobId = ''): Promise<number> {
    return this.redis().tqDlqRemove(
      ...DeadLettersScript.tenantKeys(definition, tenantId),
      DeadLettersScript.openKey(definition),
      jobId,
    );
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
