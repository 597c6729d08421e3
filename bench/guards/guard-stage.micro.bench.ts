/**
 * CPU cost of the module's job guards per job, without Redis: the guard stage and envelope
 * opening (with and without signature checks) called in a loop with in-memory ports.
 * Run: npx ts-node --transpile-only bench/guards/guard-stage.micro.bench.ts [iterations]
 */
import 'reflect-metadata';
import { Reflector } from '@nestjs/core';
import { TenantEnvelopeCodec } from '../../lib/core/envelope/tenant-envelope.codec';
import { TenantJobGuardsStage } from '../../lib/guards/tenant-job-guards.stage';
import { TenantStatusService } from '../../lib/guards/tenant-status.service';
import {
  InMemoryActorPermissionChecker,
  InMemoryEntitlementChecker,
  InMemoryTenantDirectory,
  RequiresActorPermission,
  RequiresEntitlement,
  TenantWorkerHost,
} from '../../lib';
import { TenantProcessorMetadataAccessor } from '../../lib/core/processor/tenant-processor.metadata-accessor';
import { resolveTenantQueueOptions } from '../../lib/core/options/core.options';
import { resolveGuardOptions } from '../../lib/guards/tenant-guard.options';

const N = Number(process.argv[2] ?? 200_000);

@RequiresEntitlement('exports')
class Host extends TenantWorkerHost {
  @RequiresActorPermission('reports:export')
  async process() {}
}

async function time(label: string, fn: () => unknown): Promise<void> {
  for (let i = 0; i < 2000; i++) await fn(); // warm up
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await fn();
  const ns = Number(process.hrtime.bigint() - start) / N;
  console.log(`${label.padEnd(44)} ${(ns / 1000).toFixed(2)} µs/job`);
}

async function main(): Promise<void> {
  const options = resolveTenantQueueOptions({ connection: {} });
  const signedOptions = resolveTenantQueueOptions({
    connection: {},
    envelope: { secret: 's'.repeat(40) },
  });
  const directory = new InMemoryTenantDirectory([{ id: 't1' }]);
  const entitlements = new InMemoryEntitlementChecker({ t1: ['exports'] });
  const permissions = new InMemoryActorPermissionChecker();
  permissions.grant('t1', 'u1', 'reports:export');
  const stage = new TenantJobGuardsStage(
    new TenantStatusService(directory, resolveGuardOptions(undefined)),
    entitlements,
    permissions,
    resolveGuardOptions(undefined),
    new Reflector(),
    { getProviders: () => [] } as never,
    new TenantProcessorMetadataAccessor(new Reflector()),
  );
  const codec = new TenantEnvelopeCodec(options);
  const signedCodec = new TenantEnvelopeCodec(signedOptions);
  const envelope = codec.create({ tenantId: 't1', actor: { type: 'user', id: 'u1' } });
  const signed = signedCodec.create({ tenantId: 't1', actor: { type: 'user', id: 'u1' } });
  const context = { host: new Host(), envelope } as never;
  const next = async () => undefined;

  await time('guard stage: status + entitlement + actor', () => stage.run(context, next));
  await time('envelope open (validate), unsigned', () => codec.open(envelope));
  await time('envelope open (validate + HMAC verify)', () => signedCodec.open(signed));
  await time('envelope create + sign', () =>
    signedCodec.create({ tenantId: 't1', actor: { type: 'user', id: 'u1' } }),
  );
}

void main();
