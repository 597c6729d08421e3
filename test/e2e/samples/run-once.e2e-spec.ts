import type { Job } from 'bullmq';
import {
  InvalidRunMarkerTableError,
  claimRun,
  runIdentity,
  runMarkerTableSql,
  runOnce,
} from '../../../lib';
import { SampleDatabase } from '../../../sample-app/database/sample-database';
import { StartedPostgres, startPostgres } from '../../support/postgres';

const job = (id: string, tenantId?: string, runId?: string) =>
  ({ id, tenant: tenantId ? { tenantId } : undefined, runId }) as unknown as Job;

describe('runOnce / claimRun on a real Postgres', () => {
  let postgres: StartedPostgres;
  /** The sample's pg client: `transaction(fn)` commits, or rolls back when `fn` throws. */
  let db: SampleDatabase;

  beforeAll(async () => {
    postgres = await startPostgres();
    db = await SampleDatabase.open(postgres.url);
    await db.query(runMarkerTableSql());
    await db.query('CREATE TABLE effects (run_id text NOT NULL)');
  });

  afterAll(async () => {
    await db?.close();
    await postgres?.stop();
  });

  const effect = (runId: string) =>
    db.transaction((tx) =>
      runOnce(tx, job(runId, 'acme'), async () => {
        await tx.query('INSERT INTO effects (run_id) VALUES ($1)', [runId]);
        return 'done';
      }),
    );

  it('does the work the first time, and not again once that run committed', async () => {
    expect(await effect('r1')).toEqual({ ran: true, result: 'done' });
    expect(await effect('r1')).toEqual({ ran: false, result: undefined });
    const { rows } = await db.query('SELECT run_id FROM effects');
    expect(rows).toEqual([{ run_id: 'r1' }]);
  });

  it('claims again after a rolled-back run (the marker went with the work)', async () => {
    await expect(
      db.transaction(async (tx) => {
        expect(await claimRun(tx, job('r2', 'acme'))).toBe(true);
        throw new Error('crash before commit');
      }),
    ).rejects.toThrow('crash before commit');
    expect(await effect('r2')).toEqual({ ran: true, result: 'done' });
  });

  it("keeps a system run (no tenant) apart from tenant '-' and its key apart from every tenant's", async () => {
    expect(await db.transaction((tx) => claimRun(tx, job('s1', undefined, 'nightly')))).toBe(true);
    // A tenantIdPattern may admit "-": that tenant's run is its own, not the system's.
    expect(await db.transaction((tx) => claimRun(tx, job('s2', '-', 'nightly')))).toBe(true);
    expect(await db.transaction((tx) => claimRun(tx, job('s3', undefined, 'nightly')))).toBe(false);
    const keys = [
      runIdentity(job('k1', undefined, 'x')).key,
      runIdentity(job('k2', '-', 'x')).key,
      runIdentity(job('k3', 'a/b', 'c')).key,
      runIdentity(job('k4', 'a', 'b/c')).key,
      runIdentity(job('k5', 'a%2Fb', 'c')).key,
    ];
    expect(new Set(keys).size).toBe(keys.length);
    expect(runIdentity(job('k6', 'acme', 'r/1')).key).toBe('acme/r/1');
  });

  it('keys on (tenant, run id): the same run id of another tenant is another run', async () => {
    await db.transaction((tx) => claimRun(tx, job('j1', 'acme', 'shared')));
    expect(await db.transaction((tx) => claimRun(tx, job('j2', 'globex', 'shared')))).toBe(true);
    expect(await db.transaction((tx) => claimRun(tx, job('j3', 'acme', 'shared')))).toBe(false);
    const { rows } = await db.query(
      "SELECT tenant_id FROM tenant_job_runs WHERE run_id = 'shared' ORDER BY tenant_id",
    );
    expect(rows).toEqual([{ tenant_id: 'acme' }, { tenant_id: 'globex' }]);
  });

  it('makes a concurrent duplicate run wait for the first, then skip', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = db.transaction(async (tx) => {
      const claimed = await claimRun(tx, job('r4', 'acme'));
      await held;
      return claimed;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    let secondDone = false;
    const second = db
      .transaction((tx) => claimRun(tx, job('r4', 'acme')))
      .finally(() => {
        secondDone = true;
      });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(secondDone).toBe(false); // blocked on the first run's marker key
    release();
    expect(await first).toBe(true);
    expect(await second).toBe(false);
  });

  it('refuses a table name that is not a plain identifier, writing nothing', async () => {
    const query = jest.fn();
    for (const table of ['runs; DROP TABLE effects', 'a-b', '', 'x.y.z']) {
      await expect(claimRun({ query }, job('r3', 'acme'), { table })).rejects.toThrow(
        InvalidRunMarkerTableError,
      );
      expect(() => runMarkerTableSql({ table })).toThrow(/plain identifier/);
    }
    expect(query).not.toHaveBeenCalled();
    expect(runMarkerTableSql({ table: 'jobs.runs' })).toContain(
      'CREATE TABLE IF NOT EXISTS jobs.runs',
    );
  });
});
