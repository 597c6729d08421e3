import type { PGlite } from '@electric-sql/pglite';
import { Pool } from 'pg';
import { RunMarkerClient } from '../../lib';

/** A transaction's client: `pg`'s PoolClient or PGlite's `tx`; both take `query(text, values)`. */
export type SampleTx = RunMarkerClient;

/**
 * The sample's Postgres: the server at `DATABASE_URL` through `pg`, or, without one, PGlite (a
 * WASM Postgres in this process, in memory) so `npm run sample` needs nothing installed.
 */
export abstract class SampleDatabase {
  abstract readonly kind: 'pg' | 'pglite';
  abstract query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  abstract transaction<T>(fn: (tx: SampleTx) => Promise<T>): Promise<T>;
  abstract close(): Promise<void>;

  static async open(databaseUrl: string | undefined): Promise<SampleDatabase> {
    if (databaseUrl) return new PgDatabase(new Pool({ connectionString: databaseUrl, max: 5 }));
    const { PGlite } = await import('@electric-sql/pglite');
    return new PgliteDatabase(await PGlite.create());
  }
}

class PgDatabase extends SampleDatabase {
  readonly kind = 'pg';

  constructor(private readonly pool: Pool) {
    super();
  }

  query(text: string, values?: unknown[]) {
    return this.pool.query(text, values);
  }

  async transaction<T>(fn: (tx: SampleTx) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }

  close() {
    return this.pool.end();
  }
}

class PgliteDatabase extends SampleDatabase {
  readonly kind = 'pglite';

  constructor(private readonly db: PGlite) {
    super();
  }

  query(text: string, values?: unknown[]) {
    return this.db.query(text, values);
  }

  transaction<T>(fn: (tx: SampleTx) => Promise<T>): Promise<T> {
    return this.db.transaction(fn);
  }

  close() {
    return this.db.close();
  }
}
