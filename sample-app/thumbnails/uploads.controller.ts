import { Body, Controller, Get, NotFoundException, Param, Post, UseGuards } from '@nestjs/common';
import {
  InjectTenantQueue,
  TenantContext,
  TenantQueue,
  TenantQueueRegistry,
  TenantRequiredGuard,
} from '../../lib';
import { MakeThumbnail } from './thumbnail.processor';
import { ThumbnailStore } from './thumbnail.store';

@Controller('uploads')
@UseGuards(TenantRequiredGuard)
export class UploadsController {
  constructor(
    @InjectTenantQueue('thumbnails') private readonly thumbnails: TenantQueue<MakeThumbnail>,
    private readonly registry: TenantQueueRegistry,
    private readonly tenant: TenantContext,
    private readonly store: ThumbnailStore,
  ) {}

  /** Upload a file: the thumbnail is made in the background, for this request's tenant. */
  @Post()
  async upload(@Body() body: { file?: string }) {
    const job = await this.thumbnails.add('make-thumbnail', {
      file: String(body?.file ?? 'upload.png'),
    });
    return { jobId: job.id, tenantId: job.tenantId };
  }

  /** The state of one of this tenant's jobs; another tenant's job id is "not found". */
  @Get('jobs/:id')
  async job(@Param('id') id: string) {
    const bull = this.registry.getQueue('thumbnails').bullQueue;
    // State first: once it is final, the job read after it carries the matching outcome.
    const state = await bull.getJobState(id);
    const job = await bull.getJob(id);
    if (!job || job.data?._tenant?.tenantId !== this.tenant.tenantId) {
      throw new NotFoundException(`No job ${id} for this tenant`);
    }
    return { jobId: id, state, result: job.returnvalue ?? null };
  }

  /** Thumbnails made for this tenant. */
  @Get('thumbnails')
  list() {
    return this.store.listForCurrentTenant();
  }
}
