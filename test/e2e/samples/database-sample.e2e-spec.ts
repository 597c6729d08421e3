import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { INestApplication } from '@nestjs/common';
import { Pool } from 'pg';
import request from 'supertest';
import { TenantContext } from '../../../lib';
import { DatabaseDemoModule } from '../../../sample-app/database';
import { TenantTransactions } from '../../../sample-app/database/tenant-transactions';
import { StartedPostgres, startPostgres } from '../../support/postgres';
import { uniquePrefix } from '../../support/redis-url';
import { freePort } from '../../support/redis-server';
import { bootSampleHttp } from '../../support/sample-http';
import { waitFor } from '../../support/wait';

type Http = { getHttpServer(): any };

function as(app: Http, tenant: string) {
  return {
    get: (path: string) => request(app.getHttpServer()).get(path).set('x-tenant-id', tenant),
    post: (path: string, body: object) =>
      request(app.getHttpServer()).post(path).set('x-tenant-id', tenant).send(body),
  };
}

async function invoicesOf(app: Http, tenant: string, count: number) {
  let rows: { tenant_id: string; amount_cents: number }[] = [];
  await waitFor(async () => {
    rows = (await as(app, tenant).get('/database/invoices').expect(200)).body;
    return rows.length >= count;
  }, `${count} invoice(s) of ${tenant}`);
  return rows;
}

describe('sample: a job writing to Postgres in its tenant scope (RLS, SET LOCAL)', () => {
  let postgres: StartedPostgres;
  let app: INestApplication;

  beforeAll(async () => {
    postgres = await startPostgres();
    app = await bootSampleHttp(DatabaseDemoModule.register({ databaseUrl: postgres.url }));
  });

  afterAll(async () => {
    await app?.close();
    await postgres?.stop();
  });

  it("writes each tenant's invoices, and each tenant sees only its own", async () => {
    await as(app, 'acme').post('/database/invoices', { amountCents: 1200 }).expect(201);
    await as(app, 'acme').post('/database/invoices', { amountCents: 300 }).expect(201);
    await as(app, 'globex').post('/database/invoices', { amountCents: 500 }).expect(201);

    const acme = await invoicesOf(app, 'acme', 2);
    const globex = await invoicesOf(app, 'globex', 1);
    // The processor runs 4 at once: the two acme jobs may commit in either order.
    const byAmount = (a: [string, number], b: [string, number]) => a[1] - b[1];
    expect(
      acme.map((row): [string, number] => [row.tenant_id, row.amount_cents]).sort(byAmount),
    ).toEqual([
      ['acme', 300],
      ['acme', 1200],
    ]);
    expect(globex.map((row) => [row.tenant_id, row.amount_cents])).toEqual([['globex', 500]]);

    const pool = new Pool({ connectionString: postgres.url, max: 1 });
    try {
      // As the owner (no tenant role), every tenant's rows and one run marker per job are there.
      const { rows } = await pool.query(
        'SELECT tenant_id, count(*)::int AS n FROM sample_invoices GROUP BY 1 ORDER BY 1',
      );
      expect(rows).toEqual([
        { tenant_id: 'acme', n: 2 },
        { tenant_id: 'globex', n: 1 },
      ]);
      const markers = await pool.query('SELECT count(*)::int AS n FROM sample_job_runs');
      expect(markers.rows[0].n).toBe(3);
      // SET LOCAL ended with each transaction: the pooled connection keeps no tenant.
      const { rows: setting } = await pool.query(
        "SELECT coalesce(current_setting('app.current_tenant_id', true), '') AS t",
      );
      expect(setting[0].t).toBe('');
    } finally {
      await pool.end();
    }
  });

  it("refuses, by policy, a write of another tenant's row in a tenant transaction", async () => {
    const transactions = app.get(TenantTransactions);
    await expect(
      app
        .get(TenantContext)
        .run('acme', () =>
          transactions.run((tx) =>
            tx.query(
              "INSERT INTO sample_invoices (tenant_id, run_id, amount_cents) VALUES ('globex', 'x', 1)",
            ),
          ),
        ),
    ).rejects.toThrow(/row-level security/);
  });
});

describe('sample: the same demo with no DATABASE_URL runs on PGlite (nothing installed)', () => {
  let child: ChildProcess | undefined;

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('serves invoices written by jobs into the embedded Postgres', async () => {
    const port = await freePort();
    child = fork(join(__dirname, '..', '..', 'fixtures', 'database-sample-app.ts'), [], {
      execArgv: ['-r', 'ts-node/register/transpile-only'],
      env: { ...process.env, DATABASE_URL: '', PORT: String(port), TQ_PREFIX: uniquePrefix() },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await new Promise<void>((resolve, reject) => {
      child!.once('message', () => resolve());
      child!.once('exit', (code) => reject(new Error(`sample exited early (${code})`)));
    });
    const server = { getHttpServer: () => `http://127.0.0.1:${port}` };
    await as(server, 'acme').post('/database/invoices', { amountCents: 700 }).expect(201);
    const acme = await invoicesOf(server, 'acme', 1);
    expect(acme).toMatchObject([{ tenant_id: 'acme', amount_cents: 700 }]);
    expect((await as(server, 'globex').get('/database/invoices').expect(200)).body).toEqual([]);
  }, 180_000);
});
