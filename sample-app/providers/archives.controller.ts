import { existsSync } from 'node:fs';
import { Body, Controller, Get, NotFoundException, Param, Post, UseGuards } from '@nestjs/common';
import {
  InjectTenantQueue,
  TenantContext,
  TenantQueue,
  TenantQueueRegistry,
  TenantRequiredGuard,
} from '../../lib';
import { ARCHIVES_QUEUE, ArchiveRequest } from './archive.processor';
import { TenantStorage } from './tenant-storage';
import { tenantFacingReason } from '../tenant-facing';

/**
 * `POST /archives {"files": [...]}` enqueues an archive job; `GET /archives/storage` shows the
 * tenant's storage client (the same instance its jobs use); `GET /archives/jobs/:id` shows a job
 * and whether its temp dir is gone.
 */
@Controller('archives')
@UseGuards(TenantRequiredGuard)
export class ArchivesController {
  constructor(
    @InjectTenantQueue(ARCHIVES_QUEUE) private readonly archives: TenantQueue<ArchiveRequest>,
    private readonly registry: TenantQueueRegistry,
    private readonly tenant: TenantContext,
    private readonly storage: TenantStorage,
  ) {}

  @Post()
  async create(@Body() body: { files?: string[] }) {
    const files = Array.isArray(body?.files) ? body.files.map(String) : ['report.pdf'];
    const job = await this.archives.add('archive', { files });
    return { jobId: job.id, tenantId: job.tenantId };
  }

  @Get('storage')
  storageClient() {
    const { instanceId, bucket, builtAt } = this.storage;
    return { tenantId: this.tenant.tenantId, instanceId, bucket, builtAt };
  }

  @Get('jobs/:id')
  async job(@Param('id') id: string) {
    const bull = this.registry.getQueue(ARCHIVES_QUEUE).bullQueue;
    // State first: once it is final, the job read after it carries the matching outcome.
    const state = await bull.getJobState(id);
    const job = await bull.getJob(id);
    if (!job || job.data?._tenant?.tenantId !== this.tenant.tenantId) {
      throw new NotFoundException(`No archive job ${id} for this tenant`);
    }
    const tempDir = (job.progress as { tempDir?: string } | undefined)?.tempDir;
    return {
      jobId: id,
      state,
      result: job.returnvalue ?? null,
      failedReason: tenantFacingReason(job.failedReason),
      tempDirRemoved: tempDir ? !existsSync(tempDir) : null,
    };
  }
}
