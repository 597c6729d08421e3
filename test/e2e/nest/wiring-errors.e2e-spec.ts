import {
  Controller,
  INestApplication,
  LoggerService,
  Module,
  PipeTransform,
  UseGuards,
  UsePipes,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClsModule } from 'nestjs-cls';
import {
  InjectTenantQueue,
  TenantContext,
  TenantJob,
  TenantQueue,
  TenantRequiredGuard,
  TenantProcessor,
  TenantProcessorOptions,
  TenantQueueModule,
  TenantQueueRegistry,
  InvalidTenantQueueOptionsError,
  TenantQueueRootMissingError,
  TenantWorkerHost,
  UnknownTenantQueueError,
} from '../../../lib';
import { QueueConsumerCheck } from '../../../lib/core/processor/queue-consumer.check';
import { uniquePrefix } from '../../support/redis-url';
import { testConnection } from '../../support/test-redis';
import { testRootImports } from '../../support/test-module';
import { MediaProcessor, WarnLog } from '../../support/warn-log';
import { sleep, waitFor } from '../../support/wait';

async function boot(prefix: string, providers: unknown[], logger: LoggerService) {
  @Module({
    imports: [...testRootImports(prefix), TenantQueueModule.registerQueue({ name: 'media' })],
    providers: providers as never[],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestApplication({ logger });
  await app.init();
  return app;
}

describe('wiring mistakes get a message naming the fix', () => {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  it('a processor on a queue nobody registered: a typed error naming the class and the fix', async () => {
    @TenantProcessor('unregistered')
    class ExportProcessor extends TenantWorkerHost {
      async process() {}
    }
    @Module({ imports: testRootImports(uniquePrefix('wiring')), providers: [ExportProcessor] })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await expect(app.init()).rejects.toThrow(
      new UnknownTenantQueueError(
        `@TenantProcessor('unregistered') on ExportProcessor: queue "unregistered" is not registered. ` +
          `Add TenantQueueModule.registerQueue({ name: 'unregistered' }) to the imports of the ` +
          `module that provides ExportProcessor.`,
      ),
    );
    await app.close();
  });

  it('a processor without process() (a plain JS class): the typed error naming the class', async () => {
    // Before: "TypeError" with an empty message, from reading the pipes metadata of process.
    @TenantProcessor('media')
    class ExportProcessor extends (TenantWorkerHost as unknown as new () => object) {}
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('wiring')),
        TenantQueueModule.registerQueue({ name: 'media' }),
      ],
      providers: [ExportProcessor],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await expect(app.init()).rejects.toThrow(
      new InvalidTenantQueueOptionsError(
        '@TenantProcessor class ExportProcessor must extend TenantWorkerHost and implement process(job).',
      ),
    );
    await app.close();
  });

  /** Boots a `media` processor with `options`: refused at init with `message`, and no worker. */
  async function refusedAtBoot(options: TenantProcessorOptions, message: string) {
    @TenantProcessor('media', options)
    class RenderProcessor extends TenantWorkerHost {
      async process() {}
    }
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...testRootImports(uniquePrefix('wiring')),
        TenantQueueModule.registerQueue({ name: 'media' }),
      ],
      providers: [RenderProcessor],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    const refused = app.init();
    await expect(refused).rejects.toThrow(InvalidTenantQueueOptionsError);
    await expect(refused).rejects.toThrow(
      `@TenantProcessor('media') on RenderProcessor: ${message}`,
    );
    expect(app.get(TenantQueueRegistry).getWorker('media')).toBeUndefined();
    await app.close();
  }

  it.each([3_000_000_000, 2_147_483_648, -1, 1.5, Number.NaN])(
    'a processor timeoutMs of %p: a typed error at boot, never a deadline that fires at once',
    // Node's setTimeout takes a delay above 2^31-1 ms as 1 ms: every job failed "[TIMEOUT]
    // ran past its 3000000000 ms timeout" after a millisecond; -1, 1.5 or NaN gave no deadline.
    (timeoutMs) =>
      refusedAtBoot(
        { timeoutMs },
        `timeoutMs ${timeoutMs} is not an integer from 1 to 2147483647 ms (about 24.8 days).`,
      ),
  );

  // BullMQ's Worker constructor threw a plain Error ("concurrency must be a finite number greater
  // than 0") at boot, naming neither the processor nor the option's place.
  it.each([
    [{ concurrency: 0 }, 'concurrency 0 is not an integer >= 1.'],
    [{ concurrency: 2.5 }, 'concurrency 2.5 is not an integer >= 1.'],
    [{ stalledInterval: 0 }, 'stalledInterval 0 is not a number of ms > 0.'],
    [{ drainDelay: -1 }, 'drainDelay -1 is not a number of seconds > 0.'],
    [{ maxStalledCount: -1 }, 'maxStalledCount -1 is not an integer >= 0.'],
  ])('@TenantProcessor(media, %p): a typed error at boot naming it', (bad, message) =>
    refusedAtBoot(bad, message),
  );

  // Options kept in a constant escape TypeScript's excess-property check: BullMQ took the
  // misspelt name silently and ran the worker at its default concurrency of 1.
  it.each([
    [{ concurency: 8 }, 'concurency', 'concurrency'],
    [{ maxConcurrency: 8 }, 'maxConcurrency', 'concurrency'],
    [{ timeout: 5_000 }, 'timeout', 'timeoutMs'],
  ])('@TenantProcessor(media, %p): a typed error naming the option meant', (bad, name, meant) =>
    refusedAtBoot(
      bad as TenantProcessorOptions,
      `option "${name}" is not a known option; did you mean "${meant}"?`,
    ),
  );

  // Checked in defaultJobOptions, they were taken unchecked on the queue itself: attempts -1 ran
  // one attempt, deadLetterCap 0 dropped every dead letter as it was written, 1.5 none.
  it.each([
    [{ attempts: -1 }, 'attempts', 'must be an integer >= 0'],
    [{ attempts: '3' }, 'attempts', 'must be an integer >= 0'],
    [{ backoff: { type: 'fixed', delay: -1_000 } }, 'backoff.delay', 'must be a number of ms >= 0'],
    [{ deadLetterCap: 0 }, 'deadLetterCap', 'must be an integer >= 1'],
    [{ deadLetterCap: 1.5 }, 'deadLetterCap', 'must be an integer >= 1'],
  ])('registerQueue(%p): a typed error naming registerQueue(media).%s', async (bad, field, why) => {
    const compiling = Test.createTestingModule({
      imports: [
        ...testRootImports(uniquePrefix('wiring')),
        TenantQueueModule.registerQueue({ name: 'media', ...(bad as object) }),
      ],
    }).compile();
    await expect(compiling).rejects.toThrow(InvalidTenantQueueOptionsError);
    await expect(compiling).rejects.toThrow(
      `Invalid TenantQueueModule option "registerQueue(media).${field}": ${why}`,
    );
  });

  it('one queue registered in two modules with other options: a typed error, not the first silently', async () => {
    @Module({ imports: [TenantQueueModule.registerQueue({ name: 'media', attempts: 1 })] })
    class ExportsModule {}
    @Module({ imports: [TenantQueueModule.registerQueue({ name: 'media', fairness: {} })] })
    class ReportsModule {}
    const compiling = Test.createTestingModule({
      imports: [...testRootImports(uniquePrefix('wiring')), ExportsModule, ReportsModule],
    }).compile();
    await expect(compiling).rejects.toThrow(InvalidTenantQueueOptionsError);
    await expect(compiling).rejects.toThrow(
      /Queue "media" is registered twice with different options \(attempts, fairness\)/,
    );
  });

  it('one queue twice in one registerQueue call with other options: the typed error, not one dropped', async () => {
    // Both declarations are providers of one token in one module: Nest kept the last and never
    // built the first, so `attempts: 1` was dropped without a word.
    const compiling = Test.createTestingModule({
      imports: [
        ...testRootImports(uniquePrefix('wiring')),
        TenantQueueModule.registerQueue({ name: 'media', attempts: 1 }, { name: 'media' }),
      ],
    }).compile();
    await expect(compiling).rejects.toThrow(InvalidTenantQueueOptionsError);
    await expect(compiling).rejects.toThrow(
      /Queue "media" is registered twice with different options \(attempts\)/,
    );
  });

  it('forRoot in two modules with other options: a typed error, not the first silently', async () => {
    // The module is global: one set of options serves the app, so the second forRoot's prefix
    // was dropped without a word (its queues wrote under the first's).
    const prefix = uniquePrefix('wiring');
    @Module({
      imports: [
        TenantQueueModule.forRoot({ connection: testConnection(), prefix: `${prefix}-jobs` }),
        TenantQueueModule.registerQueue({ name: 'media' }),
      ],
    })
    class JobsModule {}
    const compiling = Test.createTestingModule({
      imports: [...testRootImports(prefix), JobsModule],
    }).compile();
    await expect(compiling).rejects.toThrow(InvalidTenantQueueOptionsError);
    await expect(compiling).rejects.toThrow(
      /TenantQueueModule\.forRoot is imported twice with different options \(prefix\)/,
    );
  });

  it('forRoot in two modules with the same options: one root, it boots', async () => {
    const prefix = uniquePrefix('wiring');
    @Module({
      imports: [...testRootImports(prefix), TenantQueueModule.registerQueue({ name: 'media' })],
    })
    class JobsModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [...testRootImports(prefix), JobsModule],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    apps.push(app);
    await app.init();
    expect(app.get(TenantQueueRegistry).getQueue('media').bullQueue.opts.prefix).toBe(
      `{${prefix}:media}`,
    );
  });

  it('registerQueue without forRoot: a typed error naming forRoot, not a DI error', async () => {
    @Module({ imports: [TenantQueueModule.registerQueue({ name: 'media' })] })
    class AppModule {}
    const compiled = Test.createTestingModule({ imports: [AppModule] }).compile();
    await expect(compiled).rejects.toBeInstanceOf(TenantQueueRootMissingError);
    await expect(compiled).rejects.toThrow(
      "TenantQueueModule.registerQueue({ name: 'media' }) needs TenantQueueModule.forRoot({ connection })",
    );
  });

  it("the Quick start's shape without forRoot: the typed error, whatever injects TenantContext", async () => {
    @TenantProcessor('media')
    class ContextProcessor extends TenantWorkerHost {
      constructor(private readonly tenant: TenantContext) {
        super();
      }
      async process() {
        return this.tenant.tenantId;
      }
    }
    @Controller('uploads')
    @UseGuards(TenantRequiredGuard)
    class UploadsController {
      constructor(
        @InjectTenantQueue('media') readonly media: TenantQueue,
        readonly tenant: TenantContext,
      ) {}
    }
    @Module({
      imports: [TenantQueueModule.registerQueue({ name: 'media' })],
      controllers: [UploadsController],
      providers: [ContextProcessor],
    })
    class MediaModule {}
    @Module({ imports: [ClsModule.forRoot({ global: true }), MediaModule] })
    class AppModule {}
    for (let i = 0; i < 3; i++) {
      const compiled = Test.createTestingModule({ imports: [AppModule] }).compile();
      await expect(compiled).rejects.toBeInstanceOf(TenantQueueRootMissingError);
      await expect(compiled).rejects.toThrow(
        /needs TenantQueueModule\.forRoot\(\{ connection \}\)/,
      );
    }
    // With the root, the processor and the controller get the root's one TenantContext.
    @Module({
      imports: [
        ClsModule.forRoot({ global: true }),
        TenantQueueModule.forRoot({ connection: testConnection(), prefix: uniquePrefix() }),
        MediaModule,
      ],
    })
    class FixedModule {}
    const moduleRef = await Test.createTestingModule({ imports: [FixedModule] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    apps.push(app);
    await app.init();
    const root = app.get(TenantContext, { strict: false });
    expect(app.select(MediaModule).get(UploadsController).tenant).toBe(root);
    expect(app.select(MediaModule).get(ContextProcessor)['tenant']).toBe(root);
  });

  it('a processor missing from providers: one warning naming the queue and the fix', async () => {
    const log = new WarnLog();
    apps.push(await boot(uniquePrefix(), [], log));
    await waitFor(() => log.warns.some((w) => w.includes('"media"')), 'the warning', 15_000);
    const warns = log.warns.filter((w) => w.includes('"media"'));
    expect(warns).toHaveLength(1);
    expect(warns[0]).toContain('no worker for it is running');
    expect(warns[0]).toContain(
      "Add its @TenantProcessor('media') class (under TenantBullMqModule, its @Processor('media') class) to a module's providers",
    );
    // The other way to get here: the app kept BullModule.registerQueue beside this module's.
    expect(warns[0]).toContain(
      "A @Processor('media') class consumes this queue only when TenantBullMqModule.registerQueue({ name: 'media' }) declares it",
    );
  });

  it('no warning when another app on the same Redis and prefix runs the worker, and it runs the jobs', async () => {
    const prefix = uniquePrefix();
    const workerLog = new WarnLog();
    const producerLog = new WarnLog();
    const worker = await boot(prefix, [MediaProcessor], workerLog); // consumes media itself
    apps.push(worker);
    const producer = await boot(prefix, [], producerLog); // producer only: the worker is elsewhere
    apps.push(producer);
    await waitFor(
      async () => (await producer.get(QueueConsumerCheck).check()).length === 0,
      'the other app to be seen as the worker',
    );
    await sleep(4000); // past the check at boot
    expect(producerLog.warns.filter((w) => w.includes('"media"'))).toEqual([]);
    expect(workerLog.warns.filter((w) => w.includes('"media"'))).toEqual([]);

    // Same Redis, same prefix, same queue name: one queue, so the worker app runs the job.
    const media = producer.get(TenantQueueRegistry).getQueue<{ file: string }>('media');
    const job = await media.addForTenant('acme', 'thumbnail', { file: 'cat.png' });
    await waitFor(
      async () => (await media.bullQueue.getJobState(job.id)) === 'completed',
      "the worker app to run the producer app's job",
    );
    expect((await media.bullQueue.getJob(job.id))!.returnvalue).toBe('cat.png');
  });

  it('a processor with @UsePipes: one warning that its pipes never run on jobs, and its jobs still run', async () => {
    const piped: unknown[] = [];
    class RecordingPipe implements PipeTransform {
      transform(value: unknown) {
        piped.push(value);
        return value;
      }
    }
    @UsePipes(RecordingPipe)
    @TenantProcessor('media')
    class PipedProcessor extends TenantWorkerHost {
      async process(job: TenantJob<{ file: string }>) {
        return job.data.file;
      }
    }
    const log = new WarnLog('@UsePipes');
    const app = await boot(uniquePrefix(), [PipedProcessor], log);
    apps.push(app);
    expect(log.warns).toEqual([
      "@TenantProcessor('media') on PipedProcessor: its @UsePipes pipes never run on jobs. Pipes " +
        "transform a handler's decorated parameters, and process(job) has none. Check job.data in " +
        "process() (e.g. class-validator's validate()), or in a @UseJobGuards guard or an interceptor, " +
        'which do run on every job.',
    ]);
    const media = app.get(TenantQueueRegistry).getQueue<{ file: string }>('media');
    const job = await media.addForTenant('acme', 'thumbnail', { file: 'cat.png' });
    await waitFor(
      async () => (await media.bullQueue.getJobState(job.id)) === 'completed',
      'the job to complete',
    );
    expect((await media.bullQueue.getJob(job.id))!.returnvalue).toBe('cat.png');
    expect(piped).toEqual([]); // what the warning says: the pipe saw nothing
  });
});
