import { Module } from '@nestjs/common';
import { TenantQueueModule } from '../../lib';
import { ARCHIVES_QUEUE, ArchiveProcessor } from './archive.processor';
import { ArchivesController } from './archives.controller';
import { TenantStorage } from './tenant-storage';

/**
 * Per-tenant providers in workers: a durable storage client built once per tenant (needs
 * `ContextIdFactory.apply(new TenantContextIdStrategy())`, see main.ts) and a temp dir per job
 * released through `JobScope`.
 */
@Module({
  imports: [TenantQueueModule.registerQueue({ name: ARCHIVES_QUEUE, attempts: 1 })],
  controllers: [ArchivesController],
  providers: [TenantStorage, ArchiveProcessor],
})
export class ProvidersDemoModule {}
