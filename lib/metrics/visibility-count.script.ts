import { RedisClient } from '../core/redis/tenant-queue.redis';
import { LuaScripts } from '../core/redis/lua-scripts';
import { NO_TENANT, VisibilityKeys } from './visibility-keys';

/** Jobs BullMQ holds read per count (~5-20 ms of Redis time): above it, backlogs come from the counters. */
export const COUNT_BUDGET = 1000;

type Commands = {
  tqVisCount(
    prefix: string,
    budget: number,
    byTurn: string,
    none: string,
  ): Promise<(string | number)[]>;
  tqVisReconcile(
    totals: string,
    reconcile: string,
    tenant: string,
    truth: number,
    now: number,
    settleMs: number,
  ): Promise<number>;
  tqVisFlush(
    totals: string,
    tenants: string,
    flushed: string,
    reconcile: string,
    ...args: (string | number)[]
  ): Promise<number>;
};

/** One tenant's jobs in BullMQ's own lists, as `visibility-count.lua` counts them. */
export class BullTenantCounts {
  constructor(
    readonly waiting: number,
    readonly delayed: number,
    readonly running: number,
    readonly retrying: number,
    /** Oldest due time (ms) of a waiting job; NaN when none waits. */
    readonly oldestDueAt: number,
  ) {}
}

export const NO_BULL_JOBS = new BullTenantCounts(0, 0, 0, 0, NaN);

/** A queue counted in BullMQ: per tenant, and whether every job was read. */
export class BullCounts {
  constructor(
    readonly complete: boolean,
    readonly tenants: Map<string, BullTenantCounts>,
  ) {}

  of(tenantId: string): BullTenantCounts {
    return this.tenants.get(tenantId) ?? NO_BULL_JOBS;
  }
}

const SCRIPTS = new LuaScripts<Commands>(__dirname, {
  tqVisCount: { numberOfKeys: 1, file: 'visibility-count.lua' },
  tqVisReconcile: { numberOfKeys: 2, file: 'visibility-reconcile.lua' },
  tqVisFlush: { numberOfKeys: 4, file: 'visibility-flush.lua' },
});

function commands(redis: RedisClient): RedisClient & Commands {
  return SCRIPTS.on(redis);
}

/** Counts the queue's jobs per tenant from BullMQ's lists (one script call). */
export async function countBullJobs(
  redis: RedisClient,
  keys: VisibilityKeys,
  byTurn = false,
): Promise<BullCounts> {
  const flat = await commands(redis).tqVisCount(
    keys.bull,
    COUNT_BUDGET,
    byTurn ? '1' : '',
    NO_TENANT,
  );
  const tenants = new Map<string, BullTenantCounts>();
  for (let i = 1; i + 6 < flat.length; i += 7) {
    const due = Number(flat[i + 5]);
    const iso = String(flat[i + 6]);
    const enqueuedAt = iso === '' ? NaN : Date.parse(iso);
    const oldest = due < 0 ? NaN : enqueuedAt === enqueuedAt ? Math.min(due, enqueuedAt) : due;
    tenants.set(
      unescapeJson(String(flat[i])),
      new BullTenantCounts(
        Number(flat[i + 1]),
        Number(flat[i + 2]),
        Number(flat[i + 3]),
        Number(flat[i + 4]),
        oldest,
      ),
    );
  }
  return new BullCounts(Number(flat[0]) === 1, tenants);
}

/** Corrects a tenant's backlog counters to BullMQ's count once both held still (see the script). */
export function reconcileBacklog(
  redis: RedisClient,
  keys: VisibilityKeys,
  tenantId: string,
  truth: number,
  now: number,
  settleMs: number,
): Promise<number> {
  return commands(redis).tqVisReconcile(
    keys.totals,
    keys.reconcile,
    tenantId,
    truth,
    now,
    settleMs,
  );
}

/** A tenant id as the script read it from the job's JSON (escapes still in). */
function unescapeJson(raw: string): string {
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

/**
 * One chunk of a visibility flush (`visibility-flush.lua`): `args` as the script reads them (its
 * time to live, the zset's idle bound or '', then each tenant's counts).
 */
export function flushVisibility(
  redis: RedisClient,
  keys: VisibilityKeys,
  writer: string,
  args: (string | number)[],
): Promise<number> {
  return commands(redis).tqVisFlush(
    keys.totals,
    keys.tenants,
    keys.flushed(writer),
    keys.reconcile,
    ...args,
  );
}
