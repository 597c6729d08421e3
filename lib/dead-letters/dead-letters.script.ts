import { tenantKeyPart } from '../core/context/tenant-key';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { RedisClient } from '../core/redis/tenant-queue.redis';
import { LuaScripts } from '../core/redis/lua-scripts';

const SCRIPTS = new LuaScripts<Record<string, (...args: unknown[]) => Promise<any>>>(__dirname, {
  tqDlqRecord: { numberOfKeys: 4, file: 'dead-letter-record.lua' },
  tqDlqRemove: { numberOfKeys: 2, file: 'dead-letter-remove.lua' },
});

/** @internal Keys and scripts of the dead-letter store (all under the queue's hash tag). */
export class DeadLettersScript {
  constructor(private readonly client: () => RedisClient) {}

  static tenantKeys(definition: TenantQueueDefinition, tenantId: string): [string, string] {
    const index = `${definition.bullPrefix}:~dlq:${tenantKeyPart(tenantId)}`;
    return [index, `${index}:entries`];
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
    const [index, entries] = DeadLettersScript.tenantKeys(definition, tenantId);
    return this.redis().tqDlqRecord(
      DeadLettersScript.jobKey(definition, jobId),
      DeadLettersScript.failedKey(definition),
      index,
      entries,
      jobId,
      finishedOn,
      json,
      definition.deadLetterCap ?? 1000,
      final ? '1' : '0',
    );
  }

  async remove(definition: TenantQueueDefinition, tenantId: string, jobId = ''): Promise<number> {
    return this.redis().tqDlqRemove(...DeadLettersScript.tenantKeys(definition, tenantId), jobId);
  }

  get raw(): any {
    return this.redis();
  }

  private redis(): any {
    return SCRIPTS.on(this.client());
  }
}
