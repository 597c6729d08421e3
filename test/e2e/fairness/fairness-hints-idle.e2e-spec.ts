import { TestingModule } from '@nestjs/testing';
import {
  InMemoryTenantDirectory,
  TenantContext,
  TenantFairness,
  TenantQueueRegistry,
} from '../../../lib';
import { TenantQueueRedis } from '../../../lib/core/redis/tenant-queue.redis';
import { tenantKeyPart } from '../../../lib/core/context/tenant-key';
import { FairJobData, Started, bootFairApp } from '../../fixtures/fairness-app';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';

/**
 * Tenant churn with tiers: each tenant's tier limits are written to the gate with its jobs (its
 * `:t:` hash, a `:conf` member). Before, they stayed there for every tenant that ever ran; now
 * the tick drops them once the tenant is idle and they are older than `tierCacheMs` +
 * `enqueueTimeoutMs` (+ 1 s), and the tenant's next jobs bring them back.
 */
describe('directory/tier hints of tenants that come and go', () => {
  let moduleRef: TestingModule;
  const started: Started[] = [];
  const tenants = Array.from({ length: 30 }, (_, i) => `passing-${i}`);

  beforeAll(async () => {
    moduleRef = await bootFairApp({
      prefix: uniquePrefix('hints-idle'),
      fairness: { tickMs: 100 },
      concurrency: 4,
      started,
      directory: new InMemoryTenantDirectory(
        [...tenants, 'overridden'].map((id) => ({ id, tier: 'free' })),
      ),
      tiers: { free: { maxConcurrency: 1 } },
      tierCacheMs: 200,
    });
  });

  afterAll(async () => {
    await moduleRef?.close();
  });

  async function run(tenantId: string, jobs: number, ms = 0): Promise<Started[]> {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue<FairJobData>('fair');
    const from = started.filter((s) => s.tenantId === tenantId).length;
    await moduleRef
      .get(TenantContext)
      .run(tenantId, () =>
        queue.addBulk(Array.from({ length: jobs }, () => ({ name: 'work', data: { ms } }))),
      );
    const mine = () => started.filter((s) => s.tenantId === tenantId);
    await waitFor(() => mine().length === from + jobs, `${tenantId}'s ${jobs} jobs`, 20_000);
    return mine().slice(from);
  }

  it('drops an idle tenant’s hints, keeps an override, and caps a tenant that comes back', async () => {
    const redis = moduleRef.get(TenantQueueRedis).client;
    const { bullPrefix } = moduleRef.get(TenantQueueRegistry).getQueue('fair').definition;
    const base = `${bullPrefix}:~fair`;
    await moduleRef.get(TenantFairness).setWeight('fair', 'overridden', 2);
    for (const tenant of [...tenants, 'overridden']) await run(tenant, 1);
    expect(await redis.hget(`${base}:t:${tenantKeyPart(tenants[0])}`, 'dcap')).toBe('1');
    expect(await redis.scard(`${base}:conf`)).toBe(tenants.length + 1);

    // Idle for tierCacheMs + enqueueTimeoutMs (5 s) + 1 s: only the run-time override is left.
    await waitFor(
      async () => (await redis.smembers(`${base}:conf`)).join() === 'overridden',
      'the idle tenants’ hints gone',
      15_000,
    );
    for (const tenant of tenants) {
      expect(await redis.exists(`${base}:t:${tenantKeyPart(tenant)}`)).toBe(0);
    }
    expect(await redis.hget(`${base}:t:overridden`, 'w')).toBe('2');

    // A tenant that comes back brings its tier's cap with its jobs: one at a time.
    const runs = await run(tenants[0], 3, 300);
    const at = runs.map((r) => r.at).sort((a, b) => a - b);
    expect(Math.min(at[1] - at[0], at[2] - at[1])).toBeGreaterThanOrEqual(280);
    expect(await redis.hget(`${base}:t:${tenantKeyPart(tenants[0])}`, 'dcap')).toBe('1');
  }, 60_000);
});
