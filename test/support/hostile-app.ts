import { INestApplication, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClsModule } from 'nestjs-cls';
import {
  InMemoryTenantDirectory,
  NonRetryableError,
  SchedulerClock,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueDashboardModule,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../lib';
import { ManualClock } from '../fixtures/scheduler-app';
import { redisConnection, uniquePrefix } from './redis-url';

/** What a processor saw: the queue, the job and the tenant of its context. */
export interface SeenJob {
  queue: string;
  jobId: string;
  tenantId: string | undefined;
}

export const seen: SeenJob[] = [];

/** Records each job under the tenant its context holds; `{ fail: true }` fails it for good. */
@Injectable()
abstract class Recorder extends TenantWorkerHost {
  protected abstract readonly queue: string;

  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob<{ fail?: boolean }>) {
    seen.push({ queue: this.queue, jobId: job.id!, tenantId: this.tenant.tenantId });
    if (job.data?.fail) throw new NonRetryableError('asked to fail');
    return 'ok';
  }
}

@Injectable()
@TenantProcessor('plain', { concurrency: 4 })
class PlainRecorder extends Recorder {
  protected readonly queue = 'plain';
}

@Injectable()
@TenantProcessor('fair', { concurrency: 4 })
class FairRecorder extends Recorder {
  protected readonly queue = 'fair';
}

export interface HostileApp {
  app: INestApplication;
  clock: ManualClock;
  plain: TenantQueue;
  fair: TenantQueue;
  url: string;
}

/**
 * An app with a plain queue and a fair queue (attempts 1), dead letters, the scheduler on a
 * manual clock, the inspector and the dashboard (open, opted in), listening on 127.0.0.1.
 */
export async function bootHostileApp(
  options: { tenantIdPattern?: RegExp; tenants?: string[] } = {},
): Promise<HostileApp> {
  const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
  const directory = new InMemoryTenantDirectory(
    (options.tenants ?? []).map((id) => ({ id, timezone: 'UTC' })),
  );
  const moduleRef = await Test.createTestingModule({
    imports: [
      ClsModule.forRoot({ global: true, middleware: { mount: true } }),
      TenantQueueModule.forRoot({
        connection: redisConnection(),
        prefix: uniquePrefix('hostile'),
        ...(options.tenantIdPattern ? { tenantIdPattern: options.tenantIdPattern } : {}),
        scheduler: { enabled: false },
        directory: { useValue: directory },
        metrics: { sink: false, flushIntervalMs: 100 },
      }),
      TenantQueueModule.registerQueue(
        { name: 'plain', attempts: 1 },
        { name: 'fair', attempts: 1, fairness: true },
      ),
      TenantQueueDashboardModule.register({ allowUnauthenticated: true }),
    ],
    providers: [PlainRecorder, FairRecorder],
  })
    .overrideProvider(SchedulerClock)
    .useValue(clock)
    .compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const registry = app.get(TenantQueueRegistry);
  return { app, clock, plain: registry.getQueue('plain'), fair: registry.getQueue('fair'), url };
}
