import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tenantKeyPart } from '../core/context/tenant-key';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { RedisClient } from '../core/redis/tenant-queue.redis';

const lua = (file: string) => readFileSync(join(__dirname, file), 'utf8');
const SCRIPTS = {
  tqDlqRecord: { numberOfKeys: 4, lua: lua('dead-letter-record.lua') },
  tqDlqRemove: { numberOfKeys: 2, lua: lua('dead-letter-remove.lua') },
};
const defined = new WeakSet<object>();

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
    const client = this.client();
    if (!defined.has(client)) {
      for (const [name, script] of Object.entries(SCRIPTS)) client.defineCommand(name, script);
      defined.add(client);
    }
    return client;
  }
}
