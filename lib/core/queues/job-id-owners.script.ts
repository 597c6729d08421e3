import { TenantQueueDefinition } from '../types/queue-definition.interface';
import { ENVELOPE_KEY, SYSTEM_BUCKET } from '../../tenant-queue.constants';
import { RedisClient } from '../redis/tenant-queue.redis';
import { LuaScripts } from '../redis/lua-scripts';
import { PreparedJob } from './job-dispatcher.interface';

const CHUNK = 500;
const SCRIPTS = new LuaScripts<{
  tqJobIdOwners(...args: (string | number)[]): Promise<number>;
}>(__dirname, { tqJobIdOwners: { file: 'job-id-owners.lua' } });

/**
 * How long an id stays its first tenant's after its last use. Past that, a job still in BullMQ
 * or in the gate keeps its id all the same (the script reads its tenant there).
 */
export const JOB_ID_OWNER_TTL_MS = 24 * 60 * 60 * 1000;

/** @internal Who uses each caller-chosen job id of a queue: one tenant per id. */
export interface JobIdOwners {
  /** Claims the ids for their jobs' tenants; returns the first job whose id another owner holds. */
  claim(jobs: PreparedJob[]): Promise<PreparedJob | undefined>;
}

/** @internal The ledger in Redis, under the queue's hash tag (one Redis Cluster slot). */
export class RedisJobIdOwners implements JobIdOwners {
  constructor(
    private readonly definition: TenantQueueDefinition,
    private readonly client: () => RedisClient,
    private readonly ttlMs = JOB_ID_OWNER_TTL_MS,
  ) {}

  async claim(jobs: PreparedJob[]): Promise<PreparedJob | undefined> {
    const redis = SCRIPTS.on(this.client());
    const prefix = this.definition.bullPrefix;
    const gateJobs = `${prefix}:~fair:jobs`;
    // One call per chunk: a refusal in a later chunk leaves earlier claims, which only keep
    // those ids for this caller's own tenants (nothing of the jobs is written).
    for (let start = 0; start < jobs.length; start += CHUNK) {
      const chunk = jobs.slice(start, start + CHUNK);
      const ids = chunk.map((job) => job.opts.jobId);
      const taken = await redis.tqJobIdOwners(
        1 + 2 * chunk.length,
        gateJobs,
        ...ids.map((id) => `${prefix}:~id:${id}`),
        ...ids.map((id) => `${prefix}:${this.definition.name}:${id}`),
        this.ttlMs,
        ENVELOPE_KEY,
        SYSTEM_BUCKET,
        ...chunk.map((job) => (job.tenantId === undefined ? 's' : `t${job.tenantId}`)),
        ...ids,
      );
      if (taken > 0) return chunk[taken - 1];
    }
    return undefined;
  }
}
