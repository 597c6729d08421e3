import { runMarkerTableSql } from '../../lib';

export const RUN_MARKERS = 'sample_job_runs';
/** The role each tenant transaction takes (`SET LOCAL ROLE`), so RLS applies even to an owner. */
export const TENANT_ROLE = 'sample_tenant';

/**
 * Invoices keyed by tenant, isolated by row-level security: a transaction sees and writes only
 * the rows of the tenant in `app.current_tenant_id` (set with SET LOCAL, so it ends with it).
 */
export const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS sample_invoices (
     id serial PRIMARY KEY,
     tenant_id text NOT NULL DEFAULT current_setting('app.current_tenant_id'),
     run_id text NOT NULL,
     amount_cents int NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now())`,
  runMarkerTableSql({ table: RUN_MARKERS }),
  `DO $$ BEGIN CREATE ROLE ${TENANT_ROLE} NOLOGIN;
   EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
  `GRANT SELECT, INSERT ON sample_invoices, ${RUN_MARKERS} TO ${TENANT_ROLE}`,
  `GRANT USAGE ON SEQUENCE sample_invoices_id_seq TO ${TENANT_ROLE}`,
  ...['sample_invoices', RUN_MARKERS].flatMap((table) => [
    `ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`,
    `DROP POLICY IF EXISTS tenant_isolation ON ${table}`,
    `CREATE POLICY tenant_isolation ON ${table}
       USING (tenant_id = current_setting('app.current_tenant_id', true))
       WITH CHECK (tenant_id = current_setting('app.current_tenant_id', true))`,
  ]),
];
