import 'reflect-metadata';
import { INestApplication, Logger } from '@nestjs/common';
import { ContextIdFactory, NestFactory } from '@nestjs/core';
import { TenantContextIdStrategy } from '../lib';
import { hasRedisServer, startRedis } from '../test/support/redis-server';
import { AppModule } from './app.module';
import { redisAnswers } from './redis-answers';
import { banner, removeRunKeys, sampleRun } from './sample-run';

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

  const run = sampleRun();
  // The dashboard's guard (sample-app/visibility/basic-auth.guard.ts) reads it per request.
  process.env.DASHBOARD_PASSWORD = run.password;
  /**
   * Closes the app, then stops the Redis this run started, or removes this run's keys; says
   * which it did.
   */
  const cleanUp = async (app?: INestApplication): Promise<string> => {
    await app?.close().catch(() => undefined);
    if (stopRedis) {
      await stopRedis();
      return 'stopped its private redis-server';
    }
    if (!run.fresh) return `kept the keys under "{${run.prefix}:" (SAMPLE_PREFIX names them)`;
    const removed = await removeRunKeys(redisUrl, run.prefix).catch(() => undefined);
    return removed === undefined
      ? `could not remove its keys under "{${run.prefix}:" from ${redisUrl}`
      : `removed its ${removed} keys under "{${run.prefix}:" from ${redisUrl}`;
  };

  // Durable providers (sample-app/providers) are built once per tenant, for requests and jobs.
  ContextIdFactory.apply(new TenantContextIdStrategy());
  const port = Number(process.env.PORT ?? 3000);
  let app: INestApplication | undefined;
  try {
    // abortOnError: false, so a failed boot comes here (Nest would exit at once, leaving the
    // private redis-server running and this run's keys behind).
    app = await NestFactory.create(AppModule.register({ redisUrl, prefix: run.prefix }), {
      abortOnError: false,
    });
    await app.listen(port, '127.0.0.1');
  } catch (error) {
    logger.error(
      (error as { code?: unknown }).code === 'EADDRINUSE'
        ? `Port ${port} is in use (another app, or another sample). Run the sample on another ` +
            `port: PORT=${port + 1} npm run sample (PORT=0 picks a free one).`
        : `The sample did not start (the error above): ${(error as Error)?.message ?? String(error)}`,
    );
    await cleanUp(app);
    process.exit(1);
  }
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  process.stdout.write(`${banner(url, redisUrl, run)}\n`);

  // Signals are handled here (close, then remove this run's keys), not by enableShutdownHooks.
  const stop = async () => {
    logger.log('Stopping: the workers finish their running jobs, then the app closes');
    logger.log(`Stopped: ${await cleanUp(app)}`);
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

void main();
