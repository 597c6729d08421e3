import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { TenantContext } from '../../lib';
import { SampleDatabase, SampleTx } from './sample-database';
import { SCHEMA, TENANT_ROLE } from './schema';

export const DATABASE_DEMO_URL = Symbol('DATABASE_DEMO_URL');

/**
 * Runs work in a transaction scoped to the current tenant (of the request or the job). The
 * database opens (and gets its schema) on first use.
 */
@Injectable()
export class TenantTransactions implements OnModuleDestroy {
  private db?: Promise<SampleDatabase>;

  constructor(
    @Inject(DATABASE_DEMO_URL) private readonly databaseUrl: string | undefined,
    private readonly tenant: TenantContext,
  ) {}

  async run<T>(fn: (tx: SampleTx) => Promise<T>): Promise<T> {
    const tenantId = this.tenant.getTenantIdOrThrow();
    const db = await this.database();
    return db.transaction(async (tx) => {
      await tx.query(`SET LOCAL ROLE ${TENANT_ROLE}`);
      // = SET LOCAL app.current_tenant_id = '<tenant>', with the id as a bind parameter.
      await tx.query("SELECT set_config('app.current_tenant_id', $1, true)", [tenantId]);
      return fn(tx);
    });
  }

  async onModuleDestroy(): Promise<void> {
    const db = await this.db?.catch(() => undefined);
    await db?.close();
  }

  private database(): Promise<SampleDatabase> {
    this.db ??= SampleDatabase.open(this.databaseUrl).then(async (db) => {
      for (const statement of SCHEMA) await db.query(statement);
      new Logger('DatabaseDemo').log(`invoices in ${db.kind === 'pg' ? 'Postgres' : 'PGlite'}`);
      return db;
    });
    this.db.catch(() => (this.db = undefined));
    return this.db;
  }
}
