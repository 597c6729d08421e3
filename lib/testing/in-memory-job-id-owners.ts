import { PreparedJob } from '../core/queues/job-dispatcher.interface';
import { JobIdOwners, ownerOf } from '../core/queues/job-id-owners.script';

/** Who holds a caller-chosen id, and the claim call that created the entry. */
export interface JobIdOwner {
  owner: string;
  token: string;
}

/**
 * The ledger `RedisJobIdOwners` keeps in Redis, for one queue of `TenantQueueTestingModule`:
 * another tenant's add with an id is refused (`JobIdTakenError`) as in production. Entries last
 * until `TenantQueueTesting.clear()`.
 */
export class InMemoryJobIdOwners implements JobIdOwners {
  constructor(private readonly owners: Map<string, JobIdOwner>) {}

  async claim(jobs: PreparedJob[], token: string): Promise<PreparedJob | undefined> {
    const taken = jobs.find((job) => {
      const held = this.owners.get(job.opts.jobId);
      return held !== undefined && held.owner !== ownerOf(job);
    });
    if (taken) return taken;
    for (const job of jobs) {
      if (!this.owners.has(job.opts.jobId)) {
        this.owners.set(job.opts.jobId, { owner: ownerOf(job), token });
      }
    }
    return undefined;
  }

  release(jobs: PreparedJob[], token: string): void {
    for (const job of jobs) {
      if (this.owners.get(job.opts.jobId)?.token === token) this.owners.delete(job.opts.jobId);
    }
  }
}
