import { TestingModule } from '@nestjs/testing';
import type { Cluster } from 'ioredis';
import { InMemoryTenantDirectory, TenantContext, TenantQueueRegistry } from '../../../lib';
import { bullClient } from '../../../lib/core/bullmq';
import { FairJobData, Started, bootFairApp } from '../../fixtures/fairness-app';
import { uniquePrefix } from '../../support/redis-url';
import { sleep, waitFor } from '../../support/wait';

/**
 * A directory cap still holds after Redis lost its data. The gate keeps each tenant's limits
 * from the directory in Redis, and a process sends them at most once per `tierCacheMs` (30 s by
 * default). Before, a Redis that came back empty left the tenant uncapped until that cache ran
 * out, since the process believed it had sent them; now a missing hints epoch makes every process
 * send them again.
 */
describe('a directory cap after Redis lost its data', () => {
  let moduleRef: TestingModule;
  const started: Started[] = [];
  const prefix = uniquePrefix('hints-loss');

  beforeAll(async () => {
    moduleRef = await bootFairApp({
      prefix,
      fairness: {},
      concurrency: 4,
      started,
      directory: new InMemoryTenantDirectory([{ id: 'capped', maxConcurrency: 1 }]),
    });
  });

  afterAll(async () => {
    await moduleRef?.close();
  });

  async function run(jobs: number): Promise<Started[]> {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<FairJobData>('fair');
    const from = started.length;
    await moduleRef
      .get(TenantContext)
      .run('capped', () =>
        queue.addBulk(Array.from({ length: jobs }, () => ({ name: 'work', data: { ms: 300 } }))),
      );
    await waitFor(async () => started.length === from + jobs, `${jobs} jobs to start`, 20_000);
    return started.slice(from);
  }

  /** The least time between two starts: under 300 ms, two 300 ms jobs ran at once. */
  const closestStarts = (runs: Started[]) => {
    const at = runs.map((r) => r.at).sort((a, b) => a - b);
    return Math.min(...at.slice(1).map((t, i) => t - at[i]));
  };

  it('holds the cap, loses every key of the app, and holds it again', async () => {
    expect(closestStarts(await run(4))).toBeGreaterThanOrEqual(280);
    await sleep(400);

    // Every key of this app's prefix gone, as after a restart without persistence.
    const queue = moduleRef.get(TenantQueueRegistry).getQueue('fair').bullQueue;
    const client = await bullClient(queue);
    const keys: string[] = [];
    // On Redis Cluster, every master's share of them.
    const nodes = 'nodes' in client ? (client as Cluster).nodes('master') : [client];
    for (const node of nodes) {
      for (const pattern of [`${prefix}*`, `{${prefix}*`]) {
        let cursor = '0';
        do {
          const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
          cursor = next;
          keys.push(...found);
        } while (cursor !== '0');
      }
    }
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) await client.del(key);

    // The epoch check (every second) notices, then the next enqueue sends the cap again.
    await sleep(1_500);
    expect(closestStarts(await run(4))).toBeGreaterThanOrEqual(280);
  });
});
