/**
 * The module's own CPU per job on the worker side, without Redis: the job runner (fresh CLS
 * context, envelope validation, stages, Nest context creator) called on in-memory jobs of the
 * module's own job class. Then checks that the per-job objects keep one hidden class from job to
 * job (V8's `%HaveSameMap`), and warns loudly when one does not.
 *   node --allow-natives-syntax -r ts-node/register/transpile-only bench/context/runner.micro.ts
 */
import 'reflect-metadata';
import { createHook } from 'node:async_hooks';
import { setFlagsFromString } from 'node:v8';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClsModule, ClsService } from 'nestjs-cls';
import {
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../lib';
import { TenantEnvelopeCodec } from '../../lib/core/envelope/tenant-envelope.codec';
import { TenantJobRunner } from '../../lib/core/processor/tenant-job.runner';
import { JobRunContext, TenantJobPipeline } from '../../lib/core/processor/tenant-job-pipeline';
import { TenantBullJob } from '../../lib/core/processor/tenant-bull-job';
import { TENANT_STATE } from '../../lib/core/context/tenant-state';

const N = Number(process.env.N ?? 50_000);

@TenantProcessor('micro', { autorun: false })
class NoopProcessor extends TenantWorkerHost {
  async process() {
    return undefined;
  }
}

async function main() {
  @Module({
    imports: [
      ClsModule.forRoot({ global: true }),
      TenantQueueModule.forRoot({
        // Never connects (lazy, and nothing listens on port 1): the runner alone is measured.
        connection: { host: '127.0.0.1', port: 1, lazyConnect: true },
        prefix: 'micro',
        scheduler: { enabled: false },
      }),
      TenantQueueModule.registerQueue({ name: 'micro' }),
    ],
    providers: [NoopProcessor],
  })
  class MicroModule {}
  const app = await NestFactory.createApplicationContext(MicroModule, { logger: false });
  const runner = app.get(TenantJobRunner);
  const codec = app.get(TenantEnvelopeCodec);
  const cls = app.get(ClsService);
  const queue = app.get(TenantQueueRegistry).getQueue('micro');
  const processor = runner.createProcessor(app.get(NoopProcessor), queue.definition, {});
  const envelope = codec.create({
    tenantId: 'acme',
    actor: { type: 'user', id: 'u1' },
    correlationId: 'c',
  });
  // What a BullMQ worker of the module builds per job: a TenantBullJob of JSON-parsed data.
  const json = JSON.stringify({ n: 0, _tenant: envelope });
  const job = (i: number) => {
    const made = new TenantBullJob(queue.bullQueue, 'noop', JSON.parse(json), {}, `j${i}`);
    made.timestamp = Date.now();
    made.processedOn = Date.now();
    return made;
  };
  const measure = async (label: string, fn: (i: number) => Promise<unknown>) => {
    for (let i = 0; i < 5_000; i++) await fn(i);
    const t = process.cpuUsage();
    for (let i = 0; i < N; i++) await fn(i);
    const d = process.cpuUsage(t);
    console.log(`${label.padEnd(40)} ${((d.user + d.system) / N).toFixed(1)} µs/job`);
  };
  await measure('bare async call', async () => undefined);
  await measure('cls.run per job', (i) => cls.run(async () => i));
  await measure('envelope open (validation)', async () => codec.open({ ...envelope }));
  await measure('runner: whole worker-side path', (i) => processor(job(i), 'token'));
  await measure('producer: codec.create', async () =>
    codec.create({ tenantId: 'acme', actor: { type: 'user', id: 'u1' } }),
  );
  // Steadier than µs on a busy machine: every promise costs its AsyncLocalStorage hooks.
  let promises = 0;
  const hook = createHook({ init: (_id, type) => void (type === 'PROMISE' && promises++) });
  const counted = async (label: string, fn: (i: number) => Promise<unknown>) => {
    hook.enable();
    promises = 0;
    for (let i = 0; i < 1_000; i++) await fn(i);
    hook.disable();
    console.log(`${label.padEnd(40)} ${(promises / 1_000).toFixed(1)} promises/job`);
  };
  await counted('bare async call', async () => undefined);
  await counted('cls.run per job', (i) => cls.run(async () => i));
  await counted('runner: whole worker-side path', (i) => processor(job(i), 'token'));
  const failures = await checkShapes(app.get(TenantJobPipeline), cls, (i) =>
    processor(job(i), 'token'),
  );
  await app.close();
  if (failures > 0) process.exitCode = 1;
}

/**
 * Runs jobs with a stage that keeps their contexts, then compares the hidden class (V8 map) of
 * the first job's objects with later ones'. A difference means something builds a new shape
 * per job (a spread, a property added later), which makes the inline caches downstream miss.
 */
async function checkShapes(
  pipeline: TenantJobPipeline,
  cls: ClsService,
  run: (i: number) => Promise<unknown>,
): Promise<number> {
  let sameMap: ((a: unknown, b: unknown) => boolean) | undefined;
  try {
    setFlagsFromString('--allow-natives-syntax');
    sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as typeof sameMap;
  } catch {
    console.warn('!!! hidden-class check skipped: run with node --allow-natives-syntax');
    return 0;
  }
  const seen: { context: JobRunContext; state: unknown; job: unknown; data: unknown }[] = [];
  pipeline.useStage(
    {
      run(context, next) {
        const state = cls.get(TENANT_STATE);
        seen.push({ context, state, job: context.job, data: context.job.data });
        return next();
      },
    },
    'dedupe',
  );
  for (let i = 0; i < 2_000; i++) await run(i);
  let failures = 0;
  for (const name of ['context', 'state', 'job', 'data'] as const) {
    const [first] = seen;
    const other = seen.findIndex((s) => !sameMap!(first[name], s[name]));
    if (other < 0) {
      console.log(`hidden class of the run ${name}: the same for ${seen.length} jobs`);
      continue;
    }
    failures++;
    console.warn(
      `\n!!! WARNING: the run ${name} of job ${other} has another hidden class than job 0's: ` +
        `something gives it a new shape per job (a spread or a property added later).\n`,
    );
  }
  return failures;
}

void main();
