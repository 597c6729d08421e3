import { Body, Controller, Get, Injectable, Post } from '@nestjs/common';
import { InjectTenantQueue, TenantContext, TenantQueue } from '../../lib';

/** Calls to each tenant's API now running, the most at once, and those done (this process). */
@Injectable()
export class ApiCallMeter {
  private readonly tenants = new Map<string, { running: number; peak: number; done: number }>();

  async call(tenantId: string, ms: number): Promise<void> {
    const t = this.of(tenantId);
    t.running++;
    t.peak = Math.max(t.peak, t.running);
    try {
      await new Promise((resolve) => setTimeout(resolve, ms));
    } finally {
      t.running--;
      t.done++;
    }
  }

  of(tenantId: string) {
    let t = this.tenants.get(tenantId);
    if (!t) this.tenants.set(tenantId, (t = { running: 0, peak: 0, done: 0 }));
    return t;
  }
}

/**
 * `POST /api-budget/calls {"sync": 6, "webhooks": 6}` queues calls to the caller's API on both
 * queues of budget `tenant-api`; `GET /api-budget/calls` shows how many ran, how many run now and
 * the most that ran at once: never above the budget's cap (3), however the calls are spread.
 */
@Controller('api-budget')
export class ApiBudgetController {
  constructor(
    @InjectTenantQueue('api-sync') private readonly sync: TenantQueue<{ resource: string }>,
    @InjectTenantQueue('api-webhooks') private readonly webhooks: TenantQueue<{ event: string }>,
    private readonly meter: ApiCallMeter,
    private readonly tenant: TenantContext,
  ) {}

  @Post('calls')
  async calls(@Body() body: { sync?: number; webhooks?: number }) {
    const count = (n: unknown) => Math.min(Math.max(Number(n ?? 0) || 0, 0), 100);
    const sync = count(body?.sync);
    const webhooks = count(body?.webhooks);
    await this.sync.addBulk(
      Array.from({ length: sync }, (_, n) => ({ name: 'sync', data: { resource: `r${n}` } })),
    );
    await this.webhooks.addBulk(
      Array.from({ length: webhooks }, (_, n) => ({ name: 'hook', data: { event: `e${n}` } })),
    );
    return { tenantId: this.tenant.getTenantIdOrThrow(), queued: { sync, webhooks } };
  }

  @Get('calls')
  seen() {
    const tenantId = this.tenant.getTenantIdOrThrow();
    return { tenantId, ...this.meter.of(tenantId) };
  }
}
