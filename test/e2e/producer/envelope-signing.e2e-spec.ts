import { Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import IORedis from 'ioredis';
import {
  JobCancellations,
  JobCancelledEvent,
  TenantContext,
  TenantEnvelope,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
  parseCancelReason,
} from '../../../lib';
import { signEnvelope } from '../../../lib/core/envelope/envelope-signature';
import { redisConnection, uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { waitFor } from '../../support/wait';

// jest ignores testTimeout inside a project config; 5 s is too short on a loaded CI.
jest.setTimeout(30_000);

const NEW_SECRET = 'new-secret-0123456789-0123456789-abcdef';
const OLD_SECRET = 'old-secret-0123456789-0123456789-abcdef';
const RETIRED_SECRET = 'retired-secret-0123456789-0123456789-ab';

const handled: { jobId: string; tenantId: string | undefined }[] = [];

@TenantProcessor('signed')
class SignedProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob) {
    handled.push({ jobId: job.id!, tenantId: this.tenant.tenantId });
  }
}

async function boot(secret: string[] | undefined) {
  @Module({
    imports: [
      ...testRootImports(uniquePrefix('s'), { envelope: secret ? { secret } : undefined }),
      TenantQueueModule.registerQueue({ name: 'signed' }),
    ],
    providers: [SignedProcessor],
  })
  class AppModule {}
  const moduleRef = await bootTestModule({ imports: [AppModule] });
  return moduleRef;
}

/** Rewrites the job's `_tenant.tenantId` straight in Redis, as an attacker with Redis access could. */
async function tamperTenant(redis: IORedis, queue: TenantQueue, jobId: string, tenantId: string) {
  const key = `${queue.definition.bullPrefix}:${queue.name}:${jobId}`;
  const data = JSON.parse((await redis.hget(key, 'data'))!);
  data._tenant.tenantId = tenantId;
  await redis.hset(key, 'data', JSON.stringify(data));
}

function envelope(tenantId: string): TenantEnvelope {
  return {
    v: 1,
    tenantId,
    actorType: 'system',
    enqueuedAt: new Date().toISOString(),
    correlationId: 'corr-1',
  };
}

describe.each([
  ['on', [NEW_SECRET, OLD_SECRET]],
  ['off', undefined],
])('envelope signing %s', (mode, secret) => {
  let moduleRef: TestingModule;
  let queue: TenantQueue;
  let redis: IORedis;
  const cancelled: JobCancelledEvent[] = [];
  const signingOn = mode === 'on';

  beforeAll(async () => {
    handled.length = 0;
    redis = new IORedis(redisConnection());
    moduleRef = await boot(secret);
    queue = moduleRef.get(TenantQueueRegistry).getQueue('signed');
    moduleRef.get(JobCancellations).onCancelled((event) => cancelled.push(event));
  });

  afterAll(async () => {
    await moduleRef?.close();
    await redis?.quit();
  });

  const ranAs = (jobId: string) => handled.filter((h) => h.jobId === jobId).map((h) => h.tenantId);
  const settle = (jobId: string) =>
    waitFor(async () => {
      const state = await queue.bullQueue.getJobState(jobId);
      return state === 'completed' || state === 'failed';
    }, `job ${jobId} to finish`);

  it(`${signingOn ? 'signs' : 'does not sign'} what the producer writes, and runs it`, async () => {
    const job = await moduleRef.get(TenantContext).run('t-a', () => queue.add('work', {}));
    await settle(job.id);
    const stored = await queue.bullQueue.getJob(job.id);
    if (signingOn) expect(stored!.data._tenant.sig).toMatch(/^[A-Za-z0-9_-]{43}$/);
    else expect(stored!.data._tenant.sig).toBeUndefined();
    expect(ranAs(job.id)).toEqual(['t-a']);
  });

  it(`${signingOn ? 'refuses' : 'cannot detect'} a tenantId changed in Redis`, async () => {
    const job = await moduleRef
      .get(TenantContext)
      .run('t-a', () => queue.add('work', {}, { delay: 1000 }));
    await tamperTenant(redis, queue, job.id, 't-b');
    await settle(job.id);
    const stored = await queue.bullQueue.getJob(job.id);
    if (signingOn) {
      expect(parseCancelReason(stored!.failedReason)).toBe('INVALID_ENVELOPE');
      expect(stored!.failedReason).toMatch(/signature does not match/);
      expect(stored!.attemptsMade).toBe(1);
      expect(ranAs(job.id)).toEqual([]);
      expect(cancelled.find((event) => event.jobId === job.id)).toMatchObject({
        reason: 'INVALID_ENVELOPE',
        tenantId: undefined,
      });
    } else {
      // Without a secret the envelope is trusted as stored: the job runs as the forged tenant.
      expect(ranAs(job.id)).toEqual(['t-b']);
    }
  });

  it(`${signingOn ? 'refuses' : 'accepts'} an unsigned envelope written straight to BullMQ`, async () => {
    const job = await queue.bullQueue.add('work', { _tenant: envelope('t-a') }, { jobId: 'raw-1' });
    await settle(job.id!);
    const stored = await queue.bullQueue.getJob(job.id!);
    if (signingOn) {
      expect(parseCancelReason(stored!.failedReason)).toBe('INVALID_ENVELOPE');
      expect(stored!.failedReason).toMatch(/not signed/);
      expect(ranAs(job.id!)).toEqual([]);
    } else {
      expect(ranAs(job.id!)).toEqual(['t-a']);
    }
  });

  if (!signingOn) return;

  it('accepts an envelope signed with an older secret still listed (rotation)', async () => {
    const old = envelope('t-old');
    old.sig = signEnvelope(old, OLD_SECRET);
    const job = await queue.bullQueue.add('work', { _tenant: old }, { jobId: 'raw-old' });
    await settle(job.id!);
    expect(ranAs(job.id!)).toEqual(['t-old']);
  });

  it('refuses an envelope signed with a secret no longer listed', async () => {
    const retired = envelope('t-old');
    retired.sig = signEnvelope(retired, RETIRED_SECRET);
    const job = await queue.bullQueue.add('work', { _tenant: retired }, { jobId: 'raw-retired' });
    await settle(job.id!);
    const stored = await queue.bullQueue.getJob(job.id!);
    expect(parseCancelReason(stored!.failedReason)).toBe('INVALID_ENVELOPE');
    expect(ranAs(job.id!)).toEqual([]);
  });
});
