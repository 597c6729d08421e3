import type { ModuleMetadata } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { ClsModule, ClsModuleOptions } from 'nestjs-cls';
import {
  TENANT_QUEUE_OPTIONS_TYPE,
  TenantDirectory,
  TenantQueueModule,
  TenantTierOptions,
} from '../../lib';
import { testConnection } from './test-redis';

/** What `forRoot` takes, less what the harness sets. */
type RootOptions = Omit<typeof TENANT_QUEUE_OPTIONS_TYPE, 'connection' | 'prefix'>;

/**
 * nestjs-cls (global; `cls` adds to that, e.g. `{ middleware: { mount: true } }` for HTTP) and the
 * module's root on the test Redis (a Cluster in `npm run test:cluster`).
 */
export function testRootImports(
  prefix: string,
  options: RootOptions = {},
  cls: ClsModuleOptions = {},
) {
  return [
    ClsModule.forRoot({ global: true, ...cls }),
    TenantQueueModule.forRoot({ connection: testConnection(), prefix, ...options }),
  ];
}

/** Root options of the fixtures that take a directory, tiers and a tier cache time, each optional. */
export function tieredRootOptions(input: {
  directory?: TenantDirectory;
  tiers?: Record<string, TenantTierOptions>;
  tierCacheMs?: number;
  guards?: RootOptions['guards'];
}): RootOptions {
  return {
    ...(input.directory ? { directory: { useValue: input.directory } } : {}),
    ...(input.guards ? { guards: input.guards } : {}),
    ...(input.tiers ? { tiers: input.tiers } : {}),
    ...(input.tierCacheMs !== undefined ? { tierCacheMs: input.tierCacheMs } : {}),
  };
}

/**
 * Compiles a testing module of `metadata` and runs its init hooks: a booted app context. A boot
 * that fails in a hook closes what it opened, then throws.
 */
export async function bootTestModule(metadata: ModuleMetadata): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  try {
    await moduleRef.init();
  } catch (error) {
    await moduleRef.close().catch(() => undefined);
    throw error;
  }
  return moduleRef;
}
