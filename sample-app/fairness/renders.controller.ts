import { Body, Controller, Post } from '@nestjs/common';
import { InjectTenantQueue, TenantContext, TenantQueue } from '../../lib';
import { RENDERS_QUEUE, RenderJob } from './render.processor';

/** `POST /renders {"kind": "video", "count": 50}` with `x-tenant-id` queues that many renders. */
@Controller('renders')
export class RendersController {
  constructor(
    @InjectTenantQueue(RENDERS_QUEUE) private readonly queue: TenantQueue<RenderJob>,
    private readonly tenant: TenantContext,
  ) {}

  @Post()
  async render(@Body() body: { kind?: 'video' | 'thumbnail'; count?: number }) {
    const kind = body.kind === 'video' ? 'video' : 'thumbnail';
    const count = Math.min(Math.max(1, Number(body.count ?? 1)), 10_000);
    const jobs = Array.from({ length: count }, (_, i) => ({
      name: kind,
      data: { asset: `${kind}-${i}` },
    }));
    await this.queue.addBulk(jobs);
    return { tenantId: this.tenant.tenantId, kind, queued: count };
  }
}
