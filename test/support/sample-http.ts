import { INestApplication, Module, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClsModule } from 'nestjs-cls';
import { TenantQueueModule, TenantQueueModuleOptions } from '../../lib';
import { uniquePrefix } from './redis-url';
import { testConnection } from './test-redis';

/**
 * One sample-app demo module served over HTTP, on the test Redis under a fresh prefix, with the
 * module options the demo needs (`options`) on top of the connection.
 */
export async function bootSampleHttp(
  demo: Type | ReturnType<typeof TenantQueueModule.registerQueue>,
  options: Partial<TenantQueueModuleOptions> = {},
): Promise<INestApplication> {
  @Module({
    imports: [
      ClsModule.forRoot({ global: true, middleware: { mount: true } }),
      TenantQueueModule.forRoot({
        connection: testConnection(),
        prefix: uniquePrefix(),
        ...options,
      }),
      demo,
    ],
  })
  class SampleModule {}
  const moduleRef = await Test.createTestingModule({ imports: [SampleModule] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}
