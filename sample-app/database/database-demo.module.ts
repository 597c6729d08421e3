import { DynamicModule, Module } from '@nestjs/common';
import { TenantQueueModule } from '../../lib';
import { InvoiceProcessor } from './invoice.processor';
import { InvoicesController } from './invoices.controller';
import { DATABASE_DEMO_URL, TenantTransactions } from './tenant-transactions';

export interface DatabaseDemoOptions {
  /** A Postgres server; without one the demo runs PGlite in memory. @default DATABASE_URL */
  databaseUrl?: string;
}

/**
 * A job that writes to Postgres in its tenant's scope: a `tenant_id` column, an RLS policy,
 * `SET LOCAL app.current_tenant_id` inside the job's transaction, and the run marker in that
 * same transaction. Needs `TenantQueueModule.forRoot` and `ClsModule.forRoot` in the host app.
 */
@Module({})
export class DatabaseDemoModule {
  static register(options: DatabaseDemoOptions = {}): DynamicModule {
    return {
      module: DatabaseDemoModule,
      imports: [TenantQueueModule.registerQueue({ name: 'database-demo', attempts: 3 })],
      controllers: [InvoicesController],
      providers: [
        {
          provide: DATABASE_DEMO_URL,
          useValue: options.databaseUrl ?? (process.env.DATABASE_URL || undefined),
        },
        TenantTransactions,
        InvoiceProcessor,
      ],
    };
  }
}
