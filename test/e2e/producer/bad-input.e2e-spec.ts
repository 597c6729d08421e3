import { Injectable, Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { Queue } from 'bullmq';
import {
  InjectTenantQueue,
  InvalidJobOptionsError,
  InvalidPayloadError,
  InvalidTenantIdError,
  MissingTenantError,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
  parseCancelReason,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { waitFor } from '../../support/wait';

const handled: string[] = [];

@TenantProcessor('strict')
class StrictProcessor extends TenantWorkerHost {
  async process(job: TenantJob) {
    handled.push(job.id!);
  }
}

@Injectable()
class Producer {
  constructor(
    @InjectTenantQueue('strict') readonly queue: TenantQueue<any>,
    readonly tenant: TenantContext,
  ) {}
}

const validEnvelope = () => ({
  v: 1,
  tenantId: 'acme',
  actorType: 'user',
  actorId: 'u1',
  enqueuedAt: new Date().toISOString(),
  correlationId: 'c-1',
});

describe('bad input', () => {
  let moduleRef: TestingModule;
  let producer: Producer;
  let bull: Queue;

  beforeAll(async () => {
    @Module({
      imports: [
        ...testRootImports(uniquePrefix()),
        TenantQueueModule.registerQueue({ name: 'strict' }),
      ],
      providers: [StrictProcessor, Producer],
    })
    class AppModule {}
    moduleRef = await bootTestModule({ imports: [AppModule] });
    producer = moduleRef.get(Producer);
    bull = moduleRef.get(TenantQueueRegistry).getQueue('strict').bullQueue;
  });

  afterAll(() => moduleRef.close());

  const total = async () => {
    const counts = await bull.getJobCounts();
    return Object.values(counts).reduce((a, b) => a + b, 0);
  };

  describe('at enqueue: refused with a typed error, nothing written', () => {
    it('refuses a tenant-scoped job without a tenant', async () => {
      await expect(producer.queue.add('x', { a: 1 })).rejects.toBeInstanceOf(MissingTenantError);
      await expect(producer.queue.addBulk([{ name: 'x', data: {} }])).rejects.toThrow(
        /no tenant is in context/,
      );
      expect(await total()).toBe(0);
    });

    it.each([
      '',
      ' ',
      '../etc',
      'a'.repeat(65),
      'a:b',
      '{x}',
      '__proto__'.slice(0, 0) + '_lead',
      'ü',
    ])('refuses addForTenant(%j)', async (bad) => {
      await expect(producer.queue.addForTenant(bad, 'x', {})).rejects.toBeInstanceOf(
        InvalidTenantIdError,
      );
      expect(() => producer.tenant.run(bad, () => 1)).toThrow(InvalidTenantIdError);
      expect(await total()).toBe(0);
    });

    it.each([
      ['an array', [1, 2]],
      ['null', null],
      ['a string', 'hello'],
      ['a class instance', new Date()],
      ['a payload with _tenant', { _tenant: { tenantId: 'evil' } }],
    ])('refuses %s as payload', async (_label, payload) => {
      await expect(
        producer.tenant.run('acme', () => producer.queue.add('x', payload as any)),
      ).rejects.toBeInstanceOf(InvalidPayloadError);
      expect(await total()).toBe(0);
    });

    it.each([
      ['undefined', undefined],
      ['null', null],
      ['a number', 42],
      ['an object', { name: 'x' }],
    ])('refuses %s as job name (a plain JS caller), naming it', async (_label, name) => {
      // Before: BullMQ's add script failed in Redis ("Lua redis lib command arguments must be
      // strings or integers"), a ReplyError that names neither the job nor the fix.
      const refusals = [
        producer.tenant.run('acme', () => producer.queue.add(name as any, {})),
        producer.queue.addForTenant('acme', name as any, {}),
        producer.tenant.run('acme', () =>
          producer.queue.addBulk([
            { name: 'ok', data: {} },
            { name: name as any, data: {} },
          ]),
        ),
      ];
      for (const refused of refusals) {
        await expect(refused).rejects.toBeInstanceOf(InvalidJobOptionsError);
        await expect(refused).rejects.toThrow(
          /the job name is not a string \(it is .*\); nothing was enqueued/,
        );
      }
      expect(await total()).toBe(0);
    });

    it.each([
      ['undefined', undefined, /addBulk on queue "strict": jobs is undefined, not an array/],
      ['an object', { name: 'x', data: {} }, /jobs is an object, not an array/],
      ['an array with a hole', [{ name: 'x', data: {} }, undefined], /jobs\[1\] is undefined/],
      ['an array with a string', ['x'], /jobs\[0\] is a string/],
    ])('refuses addBulk(%s) with a typed error, nothing written', async (_label, jobs, why) => {
      const refused = producer.tenant.run('acme', () => producer.queue.addBulk(jobs as any));
      await expect(refused).rejects.toBeInstanceOf(InvalidJobOptionsError);
      await expect(refused).rejects.toThrow(why);
      expect(await total()).toBe(0);
    });

    it.each([undefined, null, 42])('TenantContext.run(%j) throws InvalidTenantIdError', (bad) => {
      // Before: undefined and null threw "TypeError: Cannot use 'in' operator to search for 'v'".
      expect(() => producer.tenant.run(bad as any, () => 1)).toThrow(InvalidTenantIdError);
    });

    it('validates all of addBulk before writing any of it', async () => {
      await expect(
        producer.tenant.run('acme', () =>
          producer.queue.addBulk([
            { name: 'ok', data: { n: 1 } },
            { name: 'bad', data: { _tenant: 'x' } },
          ]),
        ),
      ).rejects.toBeInstanceOf(InvalidPayloadError);
      expect(await total()).toBe(0);
    });
  });

  describe('in Redis: forged or malformed envelopes are cancelled, never run, never retried', () => {
    const cases: [string, unknown][] = [
      ['no envelope at all', undefined],
      ['an envelope that is a string', 'acme'],
      ['an envelope that is an array', ['acme']],
      ['an unknown field', { ...validEnvelope(), role: 'admin' }],
      ['a tenant id off-pattern', { ...validEnvelope(), tenantId: '../other' }],
      ['a tenant id with a hash tag', { ...validEnvelope(), tenantId: '{acme}' }],
      ['an oversize tenant id', { ...validEnvelope(), tenantId: 'a'.repeat(65) }],
      ['an oversize correlation id', { ...validEnvelope(), correlationId: 'c'.repeat(10_000) }],
      ['an unknown actor type', { ...validEnvelope(), actorType: 'root' }],
      ['a bad timestamp', { ...validEnvelope(), enqueuedAt: 'yesterday' }],
      ['another version', { ...validEnvelope(), v: 2 }],
      ['a number tenant id', { ...validEnvelope(), tenantId: 42 }],
      [
        'a __proto__ key',
        JSON.parse(`{"__proto__":{"tenantId":"evil"},${JSON.stringify(validEnvelope()).slice(1)}`),
      ],
      ['a missing tenant id', { ...validEnvelope(), tenantId: undefined }],
    ];

    it.each(cases)('cancels a job with %s', async (label, envelope) => {
      const data: Record<string, unknown> = { file: 'x' };
      if (envelope !== undefined) data._tenant = envelope;
      const id = `forged-${label.replace(/[^a-z]+/g, '-')}`;
      await bull.add('x', data, { jobId: id, attempts: 3 });
      await waitFor(async () => (await bull.getJobState(id)) === 'failed', `job ${id} to fail`);
      const job = (await bull.getJob(id))!;
      expect(parseCancelReason(job.failedReason)).toBe(
        envelope === undefined ? 'MISSING_TENANT' : 'INVALID_ENVELOPE',
      );
      expect(job.attemptsMade).toBe(1);
      expect(handled).not.toContain(id);
    });

    it('still runs a well-formed envelope written the same way', async () => {
      await bull.add('x', { file: 'y', _tenant: validEnvelope() }, { jobId: 'well-formed' });
      await waitFor(() => handled.includes('well-formed'), 'the valid job to run');
    });
  });
});
