import { randomBytes } from 'node:crypto';
import { TenantQueueDefinition } from '../types/queue-definition.interface';
import { ENVELOPE_KEY } from '../../tenant-queue.constants';
import { RedisClient } from '../redis/tenant-queue.redis';
import { LuaScripts } from '../redis/lua-scripts';
import { PreparedJob } from './job-dispatcher.interface';

const CHUNK = 500;
const SCRIPTS = new LuaScripts<{
  tqJobIdOwners(...args: (string | number)[]): Promise<number>;
  tqJobIdRelease(...args: (string | number)[]): Promise<number>;
}>(__dirname, {
  tqJobIdOwners: { file: 'job-id-owners.lua' },
  tqJobIdRelease: { file: 'job-id-release.lua' },
});

/**
 * How long an id stays its first tenant's after its last use. Past that, a job still in BullMQ
 * or in the gate keeps its id all the same (the script reads its tenant there).
 */
export const JOB_ID_OWNER_TTL_MS = 24 * 60 * 60 * 1000;

/** @internal Who uses each caller-chosen job id of a queue: one tenant per id. */
export interface JobIdOwners {
  /**
   * Claims the ids for their jobs' tenants under `token` (from `newToken`); returns the first job
   * whose id another owner holds (then nothing is claimed).
   */
  claim(jobs: PreparedJob[], token: string): Promise<PreparedJob | undefined>;
  /**
   * Releases the ids the claim under `token` created, for a call refused after its claim (or
   * whose claim's answer was lost). Never rejects: when Redis cannot take it now, it is sent
   * again once the connection is back.
   */
  release(jobs: PreparedJob[], token: string): void;
}

/** Tokens of claim calls: 8 random hex characters per process, then a counter (16 in all). */
const PROCESS_TOKEN = randomBytes(4).toString('hex');
let calls = 0;

export function newClaimToken(): string {
  calls = (calls + 1) % 0x100000000;
  return PROCESS_TOKEN + calls.toString(16).padStart(8, '0');
}

/** @internal The owner of a job's id: `t` and its tenant, or `s` for a job without tenant. */
export const ownerOf = (job: PreparedJob) =>
  job.tenantId === undefined ? 's' : `t${job.tenantId}`;

/** @internal The ledger in Redis, under the queue's hash tag (one Redis Cluster slot). */
export class RedisJobIdOwners implements JobIdOwners {
  /** Releases Redis could not take yet, sent again on the connection's next `ready`. */
  private readonly held: [PreparedJob[], string][] = [];

  constructor(
    private readonly definition: TenantQueueDefinition,
    private readonly client: () => RedisClient,
    private readonly ttlMs = JOB_ID_OWNER_TTL_MS,
  ) {}

  private ownerKey(job: PreparedJob): string {
    return `${this.definition.bullPrefix}:~id:${job.opts.jobId}`;
  }

  async claim(jobs: PreparedJob[], token: string): Promise<PreparedJob | undefined> {
    const redis = SCRIPTS.on(this.client());
    const prefix = this.definition.bullPrefix;
    // One call per chunk: a refusal in a later chunk leaves the earlier chunks' keys, which the
    // producer releases by the call's token.
    for (let start = 0; start < jobs.length; start += CHUNK) {
      const chunk = jobs.slice(start, start + CHUNK);
      const taken = await redis.tqJobIdOwners(
        2 * chunk.length,
        ...chunk.map((job) => this.ownerKey(job)),
        ...chunk.map((job) => `${prefix}:${this.definition.name}:${job.opts.jobId}`),
        this.ttlMs,
        ENVELOPE_KEY,
        token,
        ...chunk.map(ownerOf),
      );
      if (taken > 0) return chunk[taken - 1];
    }
    return undefined;
  }

  release(jobs: PreparedJob[], token: string): void {
    let client: RedisClient;
    try {
      client = this.client();
    } catch {
      return; // The module is closed: nothing can be sent (the keys expire on their own).
    }
    const redis = SCRIPTS.on(client);
    const send = async () => {
      for (let start = 0; start < jobs.length; start += CHUNK) {
        const chunk = jobs.slice(start, start + CHUNK);
        await redis.tqJobIdRelease(
          chunk.length,
          ...chunk.map((job) => this.ownerKey(job)),
          token,
          ...chunk.map(ownerOf),
        );
      }
    };
    // Sent at once, on the connection that sent the claim, so it runs after the claim whenever
    // the claim runs; a connection that dropped takes it once it is back (the claim, written
    // on the old socket, has run by then or never will).
    send().catch(() => {
      this.held.push([jobs, token]);
      if (this.held.length === 1) client.once('ready', () => this.sendHeld());
    });
  }

  private sendHeld(): void {
    for (const [jobs, token] of this.held.splice(0)) this.release(jobs, token);
  }
}
