import { TenantJob, TenantProcessor, TenantWorkerHost, runIdentity, runOnce } from '../../lib';
import { RUN_MARKERS } from './schema';
import { TenantTransactions } from './tenant-transactions';

export interface InvoiceJob {
  amountCents: number;
}

/**
 * Writes one invoice per run, in the job's tenant transaction. The run marker goes in the same
 * transaction (`runOnce`), so a retry or a redelivery after a crash cannot write it twice.
 */
@TenantProcessor('database-demo', { concurrency: 4 })
export class InvoiceProcessor extends TenantWorkerHost {
  constructor(private readonly transactions: TenantTransactions) {
    super();
  }

  process(job: TenantJob<InvoiceJob>) {
    return this.transactions.run(async (tx) => {
      const { ran } = await runOnce(
        tx,
        job,
        () =>
          tx.query('INSERT INTO sample_invoices (run_id, amount_cents) VALUES ($1, $2)', [
            runIdentity(job).runId,
            job.data.amountCents,
          ]),
        { table: RUN_MARKERS },
      );
      return { written: ran };
    });
  }
}
