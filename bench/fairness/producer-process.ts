/**
 * A producer in its own process for the fairness benches (`moduleSide(..., { producer:
 * 'process' })`): the same module and queue as the bench's workers, no processor, enqueueing
 * what the parent sends over IPC. Each job's `t0` is stamped here, just before its `addBulk`, so
 * a wait measured from it includes nothing of the IPC hop.
 * Environment: TQ_BENCH_CONNECTION (JSON), TQ_BENCH_PREFIX, TQ_BENCH_FAIRNESS (JSON or "false").
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClsModule } from 'nestjs-cls';
import { TenantContext, TenantQueueModule, TenantQueueRegistry } from '../../lib';
import type { BenchJob, BenchJobSpec } from './fairness-harness';

interface AddMessage {
  tenant: string;
  jobs: BenchJobSpec[];
}

async function main() {
  const fairness = JSON.parse(process.env.TQ_BENCH_FAIRNESS ?? 'false');
  @Module({
    imports: [
      ClsModule.forRoot({ global: true }),
      TenantQueueModule.forRoot({
        connection: JSON.parse(process.env.TQ_BENCH_CONNECTION!),
        prefix: process.env.TQ_BENCH_PREFIX!,
      }),
      TenantQueueModule.registerQueue({ name: 'bench', fairness: fairness || undefined }),
    ],
  })
  class ProducerModule {}
  const app = await NestFactory.createApplicationContext(ProducerModule, {
    logger: ['error', 'warn'],
  });
  const queue = app.get(TenantQueueRegistry).getQueue<BenchJob>('bench');
  const context = app.get(TenantContext);
  process.on('message', (message: AddMessage) => {
    const t0 = Date.now();
    for (const job of message.jobs) job.data.t0 = t0;
    context
      .run(message.tenant, () =>
        queue.addBulk(
          message.jobs.map((job) => ({
            name: 'w',
            data: job.data,
            opts: job.fairKey ? { fairKey: job.fairKey } : undefined,
          })),
        ),
      )
      .then(
        () => process.send!({ ok: true }),
        (error: Error) => process.send!({ ok: false, error: error.message }),
      );
  });
  process.once('disconnect', () => void app.close().then(() => process.exit(0)));
  process.send!({ ready: true });
}

void main();
