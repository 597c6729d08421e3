import {
  RequiresEntitlement,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantWorkerHost,
} from '../../lib';

export const EXPORTS_QUEUE = 'demo-exports';

export interface ExportJob {
  report: string;
}

/** Builds a (pretend) report export; runs only while the tenant is active and has "exports". */
@RequiresEntitlement('exports')
@TenantProcessor(EXPORTS_QUEUE, { concurrency: 2 })
export class ExportProcessor extends TenantWorkerHost {
  constructor(private readonly tenant: TenantContext) {
    super();
  }

  async process(job: TenantJob<ExportJob>) {
    const tenantId = this.tenant.getTenantIdOrThrow();
    return { file: `exports/${tenantId}/${job.data.report}-${job.id}.csv` };
  }
}
