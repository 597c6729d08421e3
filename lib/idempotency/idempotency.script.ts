import { tenantKeyPart } from '../core/context/tenant-key';
import { RedisClient } from '../core/redis/tenant-queue.redis';
import { LuaScripts } from '../core/redis/lua-scripts';

const SCRIPTS = new LuaScripts<Record<string, (...args: unknown[]) => Promise<any>>>(__dirname, {
  tqIdemClaim: { numberOfKeys: 2, file: 'idempotency-claim.lua' },
  tqIdemComplete: { numberOfKeys: 2, file: 'idempotency-complete.lua' },
  tqIdemLease: { numberOfKeys: 1, file: 'idempotency-lease.lua' },
});

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
    return SCRIPTS.on(this.client());
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
