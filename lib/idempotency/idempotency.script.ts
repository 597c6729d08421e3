import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tenantKeyPart } from '../core/context/tenant-key';
import { RedisClient } from '../core/redis/tenant-queue.redis';

const lua = (file: string) => readFileSync(join(__dirname, file), 'utf8');
const SCRIPTS = {
  tqIdemClaim: { numberOfKeys: 2, lua: lua('idempotency-claim.lua') },
  tqIdemComplete: { numberOfKeys: 2, lua: lua('idempotency-complete.lua') },
  tqIdemLease: { numberOfKeys: 1, lua: lua('idempotency-lease.lua') },
};
const defined = new WeakSet<object>();

export type ClaimResult =
  { state: 'done'; result: unknown } | { state: 'busy'; pttl: number } | { state: 'claimed' };

/** @internal The Redis side of `@Idempotent`: claim, lease, complete. */
export class IdempotencyScript {
  constructor(private readonly client: () => RedisClient) {}

  static keys(bullPrefix: string, tenant: string, runId: string): [string, string] {
    const base = `${bullPrefix}:~run:${tenantKeyPart(tenant)}:${runId}`;
    return [`${base}:done`, `${base}:claim`];
  }

  async claim(keys: [string, string], token: string, leaseMs: number): Promise<ClaimResult> {
    const [state, value] = (await this.redis().tqIdemClaim(...keys, token, leaseMs)) as [
      number,
      string | number,
    ];
    if (state === 1) return { state: 'done', result: parse(value as string) };
    if (state === 2) return { state: 'busy', pttl: Math.max(Number(value), 0) };
    return { state: 'claimed' };
  }

  async complete(keys: [string, string], token: string, ttlMs: number, result: unknown) {
    await this.redis().tqIdemComplete(...keys, token, ttlMs, serialise(result));
  }

  async renew(claimKey: string, token: string, leaseMs: number): Promise<void> {
    await this.redis().tqIdemLease(claimKey, token, 'renew', leaseMs);
  }

  async release(claimKey: string, token: string): Promise<void> {
    await this.redis().tqIdemLease(claimKey, token, 'release', 0);
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

const MAX_RESULT = 64 * 1024;

/** Results too large or not JSON are not kept: a skipped duplicate then returns null. */
function serialise(result: unknown): string {
  try {
    const json = JSON.stringify(result ?? null);
    return json.length <= MAX_RESULT ? json : 'null';
  } catch {
    return 'null';
  }
}

function parse(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return null;
  }
}
