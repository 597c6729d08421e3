import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import * as bullmq from 'bullmq';
import { RedisBackendRequiredError, TenantQueueModule } from '../../../lib';
import { BULLMQ_MAJOR, assertRedisBackend } from '../../../lib/core/bullmq';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { openRedis, testConnection } from '../../support/test-redis';

/** bullmq 6's backend switch (absent from bullmq 5, where every queue is on Redis). */
const six = bullmq as unknown as {
  setDefaultBackendFactory?: (factory?: unknown) => void;
  createPostgresBackend?: unknown;
};

// bullmq 5 has no other backend to refuse: the test runs where BullMQ has one (bullmq 6).
const onBullmq6 = BULLMQ_MAJOR >= 6 ? it : it.skip;

describe("BullMQ's Postgres backend", () => {
  afterEach(() => six.setDefaultBackendFactory?.());

  onBullmq6(
    'refuses to boot with a typed error naming what needs Redis; writes nothing',
    async () => {
      const prefix = uniquePrefix('pg');
      six.setDefaultBackendFactory!(six.createPostgresBackend);
      @Module({
        imports: [...testRootImports(prefix), TenantQueueModule.registerQueue({ name: 'reports' })],
      })
      class PostgresDefaultModule {}
      const error = await Test.createTestingModule({ imports: [PostgresDefaultModule] })
        .compile()
        .then((moduleRef) => moduleRef.init())
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(RedisBackendRequiredError);
      const refusal = error as RedisBackendRequiredError;
      expect(refusal.queue).toBe('reports');
      expect(refusal.backend).toBe('createPostgresBackend');
      for (const feature of ['fair gate', '@TenantCron', 'dead letters', '@Idempotent']) {
        expect(refusal.message).toContain(feature);
      }
      expect(refusal.message).toContain('setDefaultBackendFactory');
      const redis = openRedis();
      try {
        expect(await redis.keys(`*${prefix}*`)).toEqual([]);
      } finally {
        redis.disconnect();
      }
    },
  );

  onBullmq6('boots again once the app puts the default back on Redis', async () => {
    six.setDefaultBackendFactory!(six.createPostgresBackend);
    six.setDefaultBackendFactory!();
    @Module({
      imports: [
        ...testRootImports(uniquePrefix('pg')),
        TenantQueueModule.registerQueue({ name: 'reports' }),
      ],
    })
    class RedisDefaultModule {}
    const moduleRef = await bootTestModule({ imports: [RedisDefaultModule] });
    await moduleRef.close();
  });

  onBullmq6(
    "refuses a queue made on another backend (an adopted worker's), by its backend",
    async () => {
      // BullMQ's Postgres backend connects on first use: this queue never reaches a server.
      const elsewhere = new bullmq.Queue(
        'elsewhere',
        { connection: { connectionString: 'postgres://unused@127.0.0.1:1/unused' } } as never,
        six.createPostgresBackend as never,
      );
      const here = new bullmq.Queue('here', {
        connection: testConnection(),
        prefix: uniquePrefix('pg'),
      });
      try {
        let refusal: unknown;
        try {
          assertRedisBackend('reports', elsewhere);
        } catch (error) {
          refusal = error;
        }
        expect(refusal).toBeInstanceOf(RedisBackendRequiredError);
        expect((refusal as RedisBackendRequiredError).backend).toBe('PostgresQueueBackend');
        expect(() => assertRedisBackend('reports', here)).not.toThrow();
      } finally {
        await Promise.all([elsewhere.close(), here.close()]);
      }
    },
  );
});
