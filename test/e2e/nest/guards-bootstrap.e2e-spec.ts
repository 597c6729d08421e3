import { TenantWorkerLauncher } from '../../../lib/core/processor/worker-launcher';
import { Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import {
  EntitlementChecker,
  InMemoryEntitlementChecker,
  InvalidTenantQueueOptionsError,
  PortNotConfiguredError,
  RequiresActorPermission,
  RequiresEntitlement,
  TenantDirectory,
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { redisConnection, uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';

// jest ignores testTimeout inside a project config; 5 s is too short on a loaded CI.
jest.setTimeout(30_000);

@RequiresEntitlement('exports')
@TenantProcessor('needs-entitlement')
class NeedsEntitlement extends TenantWorkerHost {
  async process(_job: TenantJob) {}
}

@TenantProcessor('needs-permission')
class NeedsPermission extends TenantWorkerHost {
  @RequiresActorPermission('reports:export')
  async process(_job: TenantJob) {}
}

/** A base whose `process` requires a permission; the processor overrides `process` undecorated. */
class ExportBase extends TenantWorkerHost {
  @RequiresActorPermission('reports:export')
  async process(_job: TenantJob) {}
}

@TenantProcessor('needs-permission')
class OverridesProcess extends ExportBase {
  override async process(_job: TenantJob) {}
}

async function compile(
  processor: unknown,
  ports: Parameters<typeof TenantQueueModule.forRoot>[0] extends infer O ? Partial<O> : never = {},
): Promise<TestingModule> {
  @Module({
    imports: [
      ...testRootImports(uniquePrefix('b'), { ...ports }),
      TenantQueueModule.registerQueue({ name: 'needs-entitlement' }, { name: 'needs-permission' }),
    ],
    providers: processor ? [processor as never] : [],
  })
  class AppModule {}
  return Test.createTestingModule({ imports: [AppModule] }).compile();
}

describe('job guard configuration', () => {
  it.each([
    [NeedsEntitlement, /NeedsEntitlement uses @RequiresEntitlement.*entitlementChecker/s],
    [NeedsPermission, /NeedsPermission uses @RequiresActorPermission.*actorPermissionChecker/s],
    // The base's requirement holds for a subclass that overrides `process`.
    [OverridesProcess, /OverridesProcess uses @RequiresActorPermission.*actorPermissionChecker/s],
  ])('fails the bootstrap of %p when its checker is not configured', async (processor, message) => {
    const moduleRef = await compile(processor);
    const registry = moduleRef.get(TenantQueueRegistry);
    const error = await moduleRef.init().then(
      () => undefined,
      (failure: unknown) => failure,
    );
    // Nest's close() re-throws a failed init (a real app exits), so release the queues directly.
    await moduleRef.get(TenantWorkerLauncher).close();
    await registry.onApplicationShutdown();
    expect(error).toBeInstanceOf(PortNotConfiguredError);
    expect((error as Error).message).toMatch(message);
    // Refused in onModuleInit, before any worker could start.
    expect(registry.getWorker('needs-entitlement')).toBeUndefined();
    expect(registry.getWorker('needs-permission')).toBeUndefined();
  });

  it('boots once the checker is there', async () => {
    const moduleRef = await compile(NeedsEntitlement, {
      entitlementChecker: { useClass: InMemoryEntitlementChecker },
    });
    try {
      await moduleRef.init();
      expect(moduleRef.get(EntitlementChecker)).toBeInstanceOf(InMemoryEntitlementChecker);
    } finally {
      await moduleRef.close();
    }
  });

  it('provides safe defaults: a permissive directory, checkers that refuse to answer', async () => {
    const moduleRef = await compile(undefined);
    try {
      await moduleRef.init();
      const directory = moduleRef.get<TenantDirectory>(TenantDirectory);
      expect(await directory.getTenant('any-tenant')).toEqual({
        id: 'any-tenant',
        status: 'active',
      });
      expect(await directory.listActiveTenants(null)).toEqual({ tenants: [], nextCursor: null });
      const checker = moduleRef.get<EntitlementChecker>(EntitlementChecker);
      await expect(checker.hasEntitlement('t', 'f')).rejects.toThrow(PortNotConfiguredError);
    } finally {
      await moduleRef.close();
    }
  });

  it('refuses a port given in an unknown shape', () => {
    expect(() =>
      TenantQueueModule.forRoot({
        connection: redisConnection(),
        directory: { useValue: {}, useClass: Object } as never,
      }),
    ).toThrow(InvalidTenantQueueOptionsError);
  });
});
