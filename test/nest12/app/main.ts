/**
 * A NestJS 12 app as a user writes it, compiled with tsc to CommonJS against the packed library
 * installed from its tarball: `packed-app.nest12-spec.ts` builds and drives it. Nest 12 is ESM
 * only, so this app and the library load Nest through Node's require(esm).
 */
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { Body, Controller, Get, Module, Post, UseGuards } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Job } from 'bullmq';
import { ClsModule } from 'nestjs-cls';
import {
  InjectTenantQueue,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantRequiredGuard,
  TenantWorkerHost,
} from 'nestjs-tenant-queue';
import { TenantBullMqModule } from 'nestjs-tenant-queue/bullmq';

interface Thumbnail {
  tenantId: string;
  file: string;
  jobId: string;
}
const made: Thumbnail[] = [];

@TenantProcessor('media', { concurrency: 4 })
class MediaProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob<{ file: string }>) {
    made.push({ tenantId: this.tenant.getTenantIdOrThrow(), file: job.data.file, jobId: job.id! });
    return { thumbnail: `${job.data.file}.thumb` };
  }
}

/** An existing `@nestjs/bullmq` processor, kept as it is, on a tenant queue (the bridge). */
@Processor('exports', { concurrency: 2 })
class ExportsProcessor extends WorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: Job<{ file: string }>) {
    made.push({ tenantId: this.tenant.getTenantIdOrThrow(), file: job.data.file, jobId: job.id! });
  }
}

@Controller('uploads')
@UseGuards(TenantRequiredGuard)
class UploadsController {
  constructor(
    @InjectTenantQueue('media') private readonly media: TenantQueue<{ file: string }>,
    @InjectTenantQueue('exports') private readonly exports: TenantQueue<{ file: string }>,
    private readonly tenant: TenantContext,
  ) {}

  @Post()
  upload(@Body() body: { file: string }) {
    return this.media.add('thumbnail', { file: body.file });
  }

  @Post('exports')
  export(@Body() body: { file: string }) {
    return this.exports.add('export', { file: body.file });
  }

  @Get('thumbnails')
  thumbnails() {
    return made.filter((t) => t.tenantId === this.tenant.getTenantIdOrThrow());
  }
}

const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

@Module({
  imports: [
    ClsModule.forRoot({ global: true, middleware: { mount: true } }),
    TenantQueueModule.forRoot({
      connection: { host: url.hostname, port: Number(url.port || 6379) },
      prefix: process.env.PREFIX ?? 'nest12',
    }),
    TenantQueueModule.registerQueue({ name: 'media', fairness: {} }),
    TenantBullMqModule.registerQueue({ name: 'exports', fairness: {} }),
  ],
  controllers: [UploadsController],
  providers: [MediaProcessor, ExportsProcessor],
})
class AppModule {}

async function main() {
  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
  const manifest = readFileSync(require.resolve('@nestjs/core/package.json'), 'utf8');
  const { version } = JSON.parse(manifest) as { version: string };
  // The spec reads this line for the port and the Nest version.
  console.log(`listening ${new URL(await app.getUrl()).port} nest ${version}`);
}

void main();
