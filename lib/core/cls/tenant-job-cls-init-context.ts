import type { ClsCustomInitContext } from 'nestjs-cls';
import type { TenantJob } from '../types/tenant-job.interface';
import { TENANT_JOB_CONTEXT_TYPE } from '../../tenant-queue.constants';

/**
 * What a CLS plugin's `beforeSetup`/`afterSetup` hook receives for a job or a worker event:
 * nestjs-cls's `custom` kind, with the job (`type` tells it apart from other custom initialisers).
 * @publicApi
 */
export class TenantJobClsInitContext implements ClsCustomInitContext {
  readonly kind = 'custom';
  readonly type = TENANT_JOB_CONTEXT_TYPE;

  constructor(readonly job: TenantJob) {}

  [key: string]: unknown;
}
