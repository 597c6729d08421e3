/**
 * What the job guards cost per job: the same no-op jobs through three processors, in one run,
 * alternating, against a private redis-server.
 *   none     - default ports (permissive directory), no @Requires* decorators
 *   full     - in-memory directory + @RequiresEntitlement + @RequiresActorPermission (user actor)
 *   signed   - full, plus envelope signing (HMAC on enqueue and on every job)
 * Run: npx ts-node --transpile-only bench/guards/guard-overhead.bench.ts [jobs] [rounds]
 */
import 'reflect-metadata';
import { Logger, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClsModule } from 'nestjs-cls';
import {
  InMemoryActorPermissionChecker,
  InMemoryEntitlementChecker,
  InMemoryTenantDirectory,
  RequiresActorPermission,
  RequiresEntitlement,
  TenantContext,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../lib';
import { startRedis } from '../../test/support/redis-server';

const JOBS = Number(process.argv[2] ?? 5000);
const ROUNDS = Number(process.argv[3] ?? 3);
const TENANTS = Array.from({ length: 20 }, (_, i) => `t${i}`);
type Variant = 'none' | 'full' | 'signed';

@TenantProcessor('plain', { autorun: false, concurrency: 50 })
class PlainProcessor extends TenantWorkerHost {
  async process() {}
}

@RequiresEntitlement('exports')
@TenantProcessor('guarded', { autorun: false, concurrency: 50 })
class GuardedProcessor extends TenantWorkerHost {
  @RequiresActorPermission('reports:export')
  async process() {}
}

async function runOnce(url: string, variant: Variant): Promise<number> {
  const guarded = variant !== 'none';
  const permissions = new InMemoryActorPermissionChecker();
  for (const id of TENANTS) permissions.grant(id, 'u1', 'reports:export');
  const queueName = guarded ? 'guarded' : 'plain';
  @Module({
    imports: [
      ClsModule.forRoot({ global: true }),
      TenantQueueModule.forRoot({
        connection: { url } as never,
        prefix: `bench${Date.now()}`,
        envelope: variant === 'signed' ? { secret: 's'.repeat(40) } : undefined,
        ...(guarded
          ? {
              directory: { useValue: new InMemoryTenantDirectory(TENANTS.map((id) => ({ id }))) },
              entitlementChecker: {
                useValue: new InMemoryEntitlementChecker(
                  Object.fromEntries(TENANTS.map((id) => [id, ['exports']])),
                ),
              },
              actorPermissionChecker: { useValue: permissions },
            }
          : {}),
      }),
      TenantQueueModule.registerQueue({
        name: queueName,
        defaultJobOptions: { removeOnComplete: true },
      }),
    ],
    providers: [guarded ? GuardedProcessor : PlainProcessor],
  })
  class BenchModule {}
  const moduleRef = await Test.createTestingModule({ imports: [BenchModule] }).compile();
  moduleRef.useLogger(false);
  await moduleRef.init();
  try {
    const queue = moduleRef.get(TenantQueueRegistry).getQueue(queueName);
    const context = moduleRef.get(TenantContext);
    for (let i = 0; i < JOBS; i += 500) {
      const tenantId = TENANTS[(i / 500) % TENANTS.length];
      const batch = Array.from({ length: Math.min(500, JOBS - i) }, () => ({
        name: 'noop',
        data: {},
      }));
      await context.run({ tenantId, actor: { type: 'user', id: 'u1' } }, () =>
        queue.addBulk(batch),
      );
    }
    const host = moduleRef.get<TenantWorkerHost>(guarded ? GuardedProcessor : PlainProcessor);
    let done = 0;
    let failed = 0;
    const finished = new Promise<void>((resolve) => {
      host.worker.on('completed', () => ++done + failed === JOBS && resolve());
      host.worker.on('failed', () => done + ++failed === JOBS && resolve());
    });
    const started = process.hrtime.bigint();
    host.worker.run().catch(() => undefined);
    await finished;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (failed > 0) throw new Error(`${failed} jobs failed in variant ${variant}`);
    return JOBS / seconds;
  } finally {
    await moduleRef.close();
  }
}

async function main(): Promise<void> {
  Logger.overrideLogger(false);
  const redis = await startRedis();
  const results: Record<Variant, number[]> = { none: [], full: [], signed: [] };
  try {
    const variants: Variant[] = ['none', 'full', 'signed'];
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate the order each round so no variant always runs first (cold) or last.
      for (let i = 0; i < variants.length; i++) {
        const variant = variants[(i + round) % variants.length];
        results[variant].push(await runOnce(redis.url, variant));
      }
    }
  } finally {
    await redis.stop();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = median(results.none);
  for (const variant of ['none', 'full', 'signed'] as Variant[]) {
    const m = median(results[variant]);
    console.log(
      `${variant.padEnd(7)} median ${m.toFixed(0).padStart(6)} jobs/s  ` +
        `(${(m / base).toFixed(2)}x none)  runs: ${results[variant].map((x) => x.toFixed(0)).join(', ')}`,
    );
  }
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
