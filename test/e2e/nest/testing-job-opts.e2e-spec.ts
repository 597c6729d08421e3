import { Module, Type } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { ClsModule } from 'nestjs-cls';
import {
  InMemoryTenantDirectory,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantQueueTesting,
  TenantQueueTestingModule,
  TenantWorkerHost,
} from '../../../lib';
import { RegisterTenantQueueOptions } from '../../../lib/interfaces';
import { bootTestModule, testRootImports } from '../../support/test-module';
import { uniquePrefix } from '../../support/redis-url';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

/** What each handler saw as `job.opts`, by job name, per app. */
const seen = new Map<string, Record<string, unknown>>();

@TenantProcessor('opts')
class OptsProcessor extends TenantWorkerHost {
  async process(job: TenantJob) {
    seen.set(`${job.queueName}/${job.name}`, JSON.parse(JSON.stringify(job.opts)));
  }
}

@TenantProcessor('tuned')
class TunedProcessor extends TenantWorkerHost {
  async process(job: TenantJob) {
    seen.set(`${job.queueName}/${job.name}`, JSON.parse(JSON.stringify(job.opts)));
  }
}

@TenantProcessor('fair')
class FairProcessor extends TenantWorkerHost {
  async process(job: TenantJob) {
    seen.set(`${job.queueName}/${job.name}`, JSON.parse(JSON.stringify(job.opts)));
  }
}

const QUEUES: RegisterTenantQueueOptions[] = [
  {
    name: 'fair',
    fairness: { lanes: { interactive: { share: 0.5 }, bulk: { share: 0.5 } } },
  },
  { name: 'opts' },
  {
    name: 'tuned',
    attempts: 4,
    backoff: { type: 'fixed', delay: 250 },
    defaultJobOptions: { removeOnComplete: 5, removeOnFail: { age: 3600 } },
  },
];

/** The same adds on either app: module defaults, the queue's, and the caller's own options. */
async function addAll(registry: TenantQueueRegistry): Promise<void> {
  const opts = registry.getQueue('opts');
  const tuned = registry.getQueue('tuned');
  await opts.addForTenant('acme', 'defaults', {});
  await opts.addForTenant(
    'acme',
    'caller',
    {},
    {
      jobId: 'inv-42',
      attempts: 5,
      backoff: 2000,
      priority: 3,
      delay: 20,
      removeOnComplete: 10,
      removeOnFail: false,
      keepLogs: 7,
    },
  );
  await tuned.addForTenant('acme', 'queue-defaults', {});
  await tuned.addForTenant('acme', 'override', {}, { attempts: 2, removeOnComplete: true });
  const fair = registry.getQueue('fair');
  await fair.addForTenant('acme', 'laned', {}, { lane: 'bulk', attempts: 2 } as never);
  await opts.addForTenant('acme', 'dedup', {}, { deduplication: { id: 'd1', ttl: 60_000 } });
}

const NAMES = [
  'opts/defaults',
  'opts/caller',
  'tuned/queue-defaults',
  'tuned/override',
  'fair/laned',
  'opts/dedup',
];

/** The opts each handler saw, generated job ids replaced (they differ from run to run). */
async function runIn(
  boot: () => Promise<TestingModule>,
  drain: (m: TestingModule) => Promise<void>,
) {
  seen.clear();
  const moduleRef = await boot();
  try {
    await addAll(moduleRef.get(TenantQueueRegistry));
    await drain(moduleRef);
    const out: Record<string, Record<string, unknown>> = {};
    for (const name of NAMES) {
      const opts = { ...seen.get(name)! };
      if (name.startsWith('fair/')) {
        // The fair gate's own marks in the options it stores (the admission's delay 0, the held
        // add's timestamp, no module-drawn id), which the testing module, without a gate, has not.
        delete opts.delay;
        delete opts.timestamp;
        delete opts.jobId;
      } else if (name !== 'opts/caller') {
        expect(typeof opts.jobId).toBe('string');
        opts.jobId = '<generated>';
      }
      out[name] = opts;
    }
    return out;
  } finally {
    await moduleRef.close();
  }
}

const PROCESSORS: Type[] = [OptsProcessor, TunedProcessor, FairProcessor];

describe('job.opts under TenantQueueTestingModule', () => {
  it('is what a worker on a real queue sees for the same add', async () => {
    const directory = new InMemoryTenantDirectory([{ id: 'acme' }]);
    const real = await runIn(
      () =>
        bootTestModule({
          imports: [
            ...testRootImports(uniquePrefix('opts'), { directory: { useValue: directory } }),
            TenantQueueModule.registerQueue(...QUEUES),
          ],
          providers: PROCESSORS,
        }),
      () => waitFor(() => NAMES.every((name) => seen.has(name)), 'every job to run'),
    );
    const testing = await runIn(
      async () => {
        @Module({
          imports: [
            ClsModule.forRoot({ global: true }),
            TenantQueueTestingModule.forRoot({ directory: { useValue: directory } }),
            TenantQueueModule.registerQueue(...QUEUES),
          ],
          providers: PROCESSORS,
        })
        class AppUnderTest {}
        const moduleRef = await Test.createTestingModule({ imports: [AppUnderTest] }).compile();
        await moduleRef.init();
        return moduleRef;
      },
      (moduleRef) => moduleRef.get(TenantQueueTesting).drain(),
    );
    expect(real['opts/caller']).toMatchObject({ jobId: 'inv-42', attempts: 5, priority: 3 });
    expect(real['fair/laned']).toMatchObject({ lane: 'bulk', attempts: 2 });
    expect(testing).toEqual(real);
  });
});
