import {
  CanActivate,
  ForbiddenException,
  INestApplicationContext,
  Injectable,
  Module,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
  UseJobGuards,
  parseCancelReason,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

const calls: Record<string, number> = { handler: 0, guardThrows: 0 };

/** A shared service (also used by HTTP routes) refuses: an error of the handler, retried. */
@TenantProcessor('billing')
class BillingProcessor extends TenantWorkerHost {
  async process(_job: TenantJob) {
    calls.handler++;
    throw new ForbiddenException('billing API refused the token');
  }
}

@Injectable()
class DeniesGuard implements CanActivate {
  canActivate() {
    return false;
  }
}

@Injectable()
class ThrowsForbiddenGuard implements CanActivate {
  canActivate(): boolean {
    calls.guardThrows++;
    throw new ForbiddenException('quota service refused');
  }
}

@UseJobGuards(DeniesGuard)
@TenantProcessor('denied')
class DeniedProcessor extends TenantWorkerHost {
  async process() {}
}

@UseJobGuards(ThrowsForbiddenGuard)
@TenantProcessor('quota')
class QuotaProcessor extends TenantWorkerHost {
  async process() {}
}

describe('a ForbiddenException in a job: only a guard returning false cancels it', () => {
  let app: INestApplicationContext;

  beforeAll(async () => {
    const queue = (name: string) =>
      TenantQueueModule.registerQueue({ name, attempts: 3, backoff: { type: 'fixed', delay: 10 } });
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('forbidden')),
        queue('billing'),
        queue('denied'),
        queue('quota'),
      ],
      providers: [
        BillingProcessor,
        DeniedProcessor,
        QuotaProcessor,
        DeniesGuard,
        ThrowsForbiddenGuard,
      ],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app.close();
  });

  async function runToFailure(queueName: string) {
    const queue = app.get(TenantQueueRegistry).getQueue(queueName);
    const added = await queue.addForTenant('acme', 'run', {});
    await waitFor(
      async () => (await queue.bullQueue.getJobState(added.id)) === 'failed',
      `${queueName} job to fail`,
    );
    return (await queue.bullQueue.getJob(added.id))!;
  }

  it('the handler throws one: retried per attempts, failing with its own message (docs/jobs.md)', async () => {
    const job = await runToFailure('billing');
    expect(calls.handler).toBe(3);
    expect(job.attemptsMade).toBe(3);
    expect(job.failedReason).toBe('billing API refused the token');
    expect(parseCancelReason(job.failedReason)).toBeUndefined();
  });

  it('a guard throws one: an error like any other, retried (docs/guards.md)', async () => {
    const job = await runToFailure('quota');
    expect(calls.guardThrows).toBe(3);
    expect(job.failedReason).toBe('quota service refused');
  });

  it('a guard returns false: cancelled with FORBIDDEN, never retried', async () => {
    const job = await runToFailure('denied');
    expect(job.attemptsMade).toBe(1);
    expect(parseCancelReason(job.failedReason)).toBe('FORBIDDEN');
  });
});
