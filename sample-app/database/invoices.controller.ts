import { Body, Controller, Get, Post, UseGuards } from '@nestjs/common';
import { InjectTenantQueue, TenantQueue, TenantRequiredGuard } from '../../lib';
import { InvoiceJob } from './invoice.processor';
import { TenantTransactions } from './tenant-transactions';

/** Routes act on the request's tenant (`x-tenant-id`); RLS keeps every query to its rows. */
@Controller('database')
@UseGuards(TenantRequiredGuard)
export class InvoicesController {
  constructor(
    @InjectTenantQueue('database-demo') private readonly queue: TenantQueue<InvoiceJob>,
    private readonly transactions: TenantTransactions,
  ) {}

  /** `{ "amountCents": 1200 }`: a job writes the invoice in the tenant's transaction. */
  @Post('invoices')
  async create(@Body() body: InvoiceJob) {
    const job = await this.queue.add('invoice', { amountCents: Number(body.amountCents) });
    return { jobId: job.id };
  }

  /** No WHERE clause: the policy returns this tenant's invoices only. */
  @Get('invoices')
  list() {
    return this.transactions.run(async (tx) => {
      const { rows } = await tx.query(
        'SELECT tenant_id, run_id, amount_cents FROM sample_invoices ORDER BY id',
      );
      return rows;
    });
  }
}
