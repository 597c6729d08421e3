import { Module } from '@nestjs/common';
import { TenantQueueModule } from '../../lib';
import { ACME_POOL, CSV_IMPORTS, CsvImportProcessor } from './csv-import.processor';
import { CsvImportsController } from './csv-imports.controller';

/**
 * Dedicated pools demo: `csv-imports` routes tenant acme to its own pool `csv-imports-acme` (its
 * own BullMQ queue, fair gate and workers); every other tenant shares `csv-imports`. Producers
 * and the processor are the same code; only the routing says where a tenant's jobs go.
 */
@Module({
  imports: [
    TenantQueueModule.registerQueue({
      name: CSV_IMPORTS,
      routing: { acme: ACME_POOL },
      fairness: { defaultConcurrency: 2 },
      defaultJobOptions: { removeOnComplete: { count: 1000 } },
    }),
  ],
  controllers: [CsvImportsController],
  providers: [CsvImportProcessor],
})
export class PoolsDemoModule {}
