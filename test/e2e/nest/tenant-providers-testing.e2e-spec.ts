import { Inject, Injectable, Module, Scope } from '@nestjs/common';
import { ContextIdFactory, REQUEST } from '@nestjs/core';
import { TestingModule } from '@nestjs/testing';
import { ClsModule } from 'nestjs-cls';
import {
  JobScope,
  TenantContext,
  TenantContextIdStrategy,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueTesting,
  TenantQueueTestingModule,
  TenantRequestPayload,
  TenantWorkerHost,
} from '../../../lib';
import { bootTestModule } from '../../support/test-module';

const built: string[] = [];
const released: string[] = [];

@Injectable({ scope: Scope.REQUEST, durable: true })
class TenantSettings {
  readonly tenantId: string | undefined;

  constructor(@Inject(REQUEST) payload: TenantRequestPayload) {
    this.tenantId = payload.tenantId;
    built.push(String(payload.tenantId));
  }
}

@TenantProcessor('settings')
class SettingsProcessor extends TenantWorkerHost {
  constructor(
    private readonly settings: TenantSettings,
    private readonly scope: JobScope,
  ) {
    super();
  }

  async process(job: TenantJob) {
    this.scope.defer(() => released.push(String(job.id)));
    return this.settings.tenantId;
  }
}

/** A user's own test of a scoped processor: TenantQueueTestingModule runs it the same way. */
describe('per-tenant providers under TenantQueueTestingModule (no Redis)', () => {
  let moduleRef: TestingModule;

  beforeAll(async () => {
    ContextIdFactory.apply(new TenantContextIdStrategy());
    @Module({
      imports: [
        ClsModule.forRoot({ global: true }),
        TenantQueueTestingModule.forRoot(),
        TenantQueueModule.registerQueue({ name: 'settings' }),
      ],
      providers: [TenantSettings, SettingsProcessor],
    })
    class AppUnderTest {}
    moduleRef = await bootTestModule({ imports: [AppUnderTest] });
  });

  afterAll(async () => {
    await moduleRef?.close();
    ContextIdFactory.apply(undefined as never);
  });

  it('builds the durable provider once per tenant and releases each job scope', async () => {
    const queue = moduleRef.get<TenantQueue>('TenantQueue:settings');
    const tenant = moduleRef.get(TenantContext);
    for (const tenantId of ['a', 'b', 'a', 'b', 'a']) {
      await tenant.run(tenantId, () => queue.add('apply', {}));
    }
    const testing = moduleRef.get(TenantQueueTesting);
    await testing.drain();
    const jobs = testing.jobs('settings');
    expect(jobs.map((job) => [job.state, job.result])).toEqual(
      ['a', 'b', 'a', 'b', 'a'].map((t) => ['completed', t]),
    );
    expect(built.sort()).toEqual(['a', 'b']);
    expect(released.sort()).toEqual(jobs.map((job) => job.id).sort());
  });
});
