/**
 * The module's own CPU per job on the worker side, without Redis: the job runner (fresh CLS
 * context, envelope validation, stages, Nest context creator) called on in-memory jobs.
 *   npx ts-node --transpile-only bench/context/runner.micro.ts
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClsModule, ClsService } from 'nestjs-cls';
import {
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../lib';
import { TenantEnvelopeCodec } from '../../lib/envelope/tenant-envelope.codec';
import { TenantJobRunner } from '../../lib/processor/tenant-job.runner';

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
        connection: { lazyConnect: true },
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
  const job = (i: number) =>
    ({
      id: `j${i}`,
      name: 'noop',
      queueName: 'micro',
      data: { n: i, _tenant: envelope },
      opts: {},
      timestamp: Date.now(),
      processedOn: Date.now(),
      attemptsMade: 0,
      updateData: async () => undefined,
    }) as any;
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
  await app.close();
}

void main();
