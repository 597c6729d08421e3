import { Injectable, Module } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { ClsPluginTransactional, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterDrizzleOrm } from '@nestjs-cls/transactional-adapter-drizzle-orm';
import { sql } from 'drizzle-orm';
import { NodePgDatabase, drizzle } from 'drizzle-orm/node-postgres';
import { InjectableProxy } from 'nestjs-cls';
import { Pool } from 'pg';
import {
  InjectTenantQueue,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { StartedPostgres, startPostgres } from '../../support/postgres';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports, bootTestModule } from '../../support/test-module';
import { sleep, waitFor } from '../../support/wait';

const DRIZZLE = Symbol('DRIZZLE');
type Db = NodePgDatabase;
type Adapter = TransactionalAdapterDrizzleOrm<Db>;

let pool: Pool;

@Module({
  providers: [{ provide: DRIZZLE, useFactory: () => drizzle({ client: pool }) }],
  exports: [DRIZZLE],
})
class DbModule {}

/**
 * The tenant's view of the database for one CLS context (a request-scoped proxy provider, so it
 * exists in a job only when the module resolves proxy providers there): binds the current
 * transaction to the tenant with `SET LOCAL`.
 */
@InjectableProxy()
class TenantDb {
  readonly tenantId: string | undefined;

  constructor(
    tenant: TenantContext,
    private readonly txHost: TransactionHost<Adapter>,
  ) {
    this.tenantId = tenant.tenantId;
  }

  async bind(): Promise<Db> {
    const tx = this.txHost.tx;
    // SET LOCAL takes no bind parameters; set_config(..., true) is the same, parameterised.
    await tx.execute(sql`SELECT set_config('app.current_tenant_id', ${this.tenantId}, true)`);
    return tx;
  }
}

@Injectable()
class Notes {
  constructor(private readonly db: TenantDb) {}

  @Transactional()
  async record(body: string, fail: boolean): Promise<void> {
    const tx = await this.db.bind();
    await tx.execute(sql`INSERT INTO notes (body) VALUES (${body})`);
    await sleep(50); // the other jobs' transactions are open meanwhile
    if (fail) throw new Error(`refused ${body}`);
  }
}

@TenantProcessor('tx-q', { concurrency: 6 })
class NotesProcessor extends TenantWorkerHost {
  constructor(private readonly notes: Notes) {
    super();
  }

  async process(job: TenantJob<{ body: string; fail: boolean }>): Promise<void> {
    await this.notes.record(job.data.body, job.data.fail);
  }
}

@Injectable()
class Producer {
  constructor(
    @InjectTenantQueue('tx-q') readonly queue: TenantQueue<{ body: string; fail: boolean }>,
    readonly tenant: TenantContext,
    readonly registry: TenantQueueRegistry,
  ) {}
}

describe('@Transactional() in a job handler, per tenant, on a real Postgres', () => {
  let postgres: StartedPostgres;
  let moduleRef: TestingModule;

  beforeAll(async () => {
    postgres = await startPostgres();
    pool = new Pool({ connectionString: postgres.url, max: 8 });
    await pool.query(`
      CREATE TABLE notes (
        id serial PRIMARY KEY,
        tenant_id text NOT NULL DEFAULT current_setting('app.current_tenant_id'),
        body text NOT NULL
      )`);
    @Module({
      imports: [
        ...testRootImports(
          uniquePrefix(),
          {},
          {
            proxyProviders: [TenantDb],
            plugins: [
              new ClsPluginTransactional({
                imports: [DbModule],
                adapter: new TransactionalAdapterDrizzleOrm({ drizzleInstanceToken: DRIZZLE }),
              }),
            ],
          },
        ),
        TenantQueueModule.registerQueue({ name: 'tx-q', attempts: 1 }),
      ],
      providers: [Notes, NotesProcessor, Producer],
    })
    class AppModule {}
    moduleRef = await bootTestModule({ imports: [AppModule] });
  });

  afterAll(async () => {
    await moduleRef?.close();
    await pool?.end();
    await postgres?.stop();
  });

  it('commits what a job wrote when it succeeds, rolls it back when it throws', async () => {
    const producer = moduleRef.get(Producer);
    const plan = [
      { tenant: 'tenant-a', body: 'a-1', fail: false },
      { tenant: 'tenant-b', body: 'b-1', fail: false },
      { tenant: 'tenant-a', body: 'a-bad', fail: true },
      { tenant: 'tenant-b', body: 'b-bad', fail: true },
      { tenant: 'tenant-a', body: 'a-2', fail: false },
      { tenant: 'tenant-b', body: 'b-2', fail: false },
    ];
    for (const { tenant, body, fail } of plan) {
      await producer.tenant.run(tenant, () => producer.queue.add('note', { body, fail }));
    }
    const bull = producer.registry.getQueue('tx-q').bullQueue;
    await waitFor(async () => {
      const counts = await bull.getJobCounts('completed', 'failed');
      return counts.completed + counts.failed === plan.length;
    }, 'all six jobs to finish');

    const { rows } = await pool.query<{ tenant_id: string; body: string }>(
      'SELECT tenant_id, body FROM notes ORDER BY body',
    );
    expect(rows).toEqual([
      { tenant_id: 'tenant-a', body: 'a-1' },
      { tenant_id: 'tenant-a', body: 'a-2' },
      { tenant_id: 'tenant-b', body: 'b-1' },
      { tenant_id: 'tenant-b', body: 'b-2' },
    ]);
    const failed = await bull.getJobs(['failed']);
    expect(failed.map((job) => job.failedReason).sort()).toEqual([
      'refused a-bad',
      'refused b-bad',
    ]);
    // SET LOCAL ended with each transaction: no pooled connection keeps a tenant.
    const clients = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
    for (const client of clients) {
      const { rows: setting } = await client.query(
        "SELECT coalesce(current_setting('app.current_tenant_id', true), '') AS t",
      );
      expect(setting[0].t).toBe('');
      client.release();
    }
  });
});
