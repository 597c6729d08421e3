import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { ContextIdFactory, NestFactory } from '@nestjs/core';
import { TenantContextIdStrategy } from '../lib';
import { hasRedisServer, startRedis } from '../test/support/redis-server';
import { AppModule } from './app.module';
import { redisAnswers } from './redis-answers';

const logger = new Logger('sample');

async function main(): Promise<void> {
  let redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  let stopRedis: (() => Promise<void>) | undefined;
  if (!(await redisAnswers(redisUrl))) {
    if (!hasRedisServer()) {
      logger.error(
        `Nothing answers on ${redisUrl} and redis-server is not installed. Either start Redis ` +
          `(Debian/Ubuntu: "sudo apt-get install -y redis-server", macOS: "brew install redis") ` +
          `or set REDIS_URL=redis://host:port to one you have, then run "npm run sample" again.`,
      );
      process.exit(1);
    }
    const redis = await startRedis();
    redisUrl = redis.url;
    stopRedis = redis.stop;
    logger.log(`Started a private redis-server at ${redisUrl} (stopped when the sample exits)`);
  }

  // Durable providers (sample-app/providers) are built once per tenant, for requests and jobs.
  ContextIdFactory.apply(new TenantContextIdStrategy());
  const app = await NestFactory.create(AppModule.register({ redisUrl }));
  app.enableShutdownHooks();
  const port = Number(process.env.PORT ?? 3000);
  await app.listen(port, '127.0.0.1');
  logger.log(`Sample app on http://127.0.0.1:${port} (Redis ${redisUrl}). Try:`);
  logger.log(
    `  curl -s -XPOST localhost:${port}/uploads -H 'x-tenant-id: acme' -H 'content-type: application/json' -d '{"file":"cat.png"}'`,
  );
  logger.log(`  curl -s localhost:${port}/uploads/thumbnails -H 'x-tenant-id: acme'`);
  logger.log(
    `  curl -s -XPOST localhost:${port}/archives -H 'x-tenant-id: acme' -H 'content-type: application/json' -d '{"files":["a.pdf"]}'`,
  );

  const stop = async () => {
    await app.close();
    await stopRedis?.();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

void main();
