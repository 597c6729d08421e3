import { Body, Controller, Delete, Get, Put, UseFilters, UseGuards } from '@nestjs/common';
import { TenantContext, TenantRequiredGuard, TenantScheduler } from '../../lib';
import { DigestStore } from './digest.store';
import { InvalidScheduleFilter } from './invalid-schedule.filter';

interface DigestScheduleBody {
  /** Five-field cron, e.g. "30 7 * * 1-5". */
  cron: string;
  /** IANA zone, "UTC" or "tenant" (the tenant's zone). */
  timezone?: string;
  enabled?: boolean;
}

/** A tenant sets its own digest schedule; invalid cron or zone answers 400. */
@Controller('schedules')
@UseGuards(TenantRequiredGuard)
@UseFilters(InvalidScheduleFilter)
export class SchedulesController {
  constructor(
    private readonly scheduler: TenantScheduler,
    private readonly tenant: TenantContext,
    private readonly store: DigestStore,
  ) {}

  @Put('digest')
  async setDigest(@Body() body: DigestScheduleBody) {
    const tenantId = this.tenant.getTenantIdOrThrow();
    const schedule = await this.scheduler.upsert(tenantId, 'digest', {
      cron: body?.cron,
      timezone: body?.timezone ?? 'tenant',
      enabled: body?.enabled ?? true,
      missed: 'once',
      job: { queue: 'digests', name: 'custom-digest' },
    });
    return { ...schedule, upcoming: await this.scheduler.next(tenantId, 'digest', 3) };
  }

  @Get()
  list() {
    return this.scheduler.list(this.tenant.getTenantIdOrThrow());
  }

  @Delete('digest')
  async removeDigest() {
    return { removed: await this.scheduler.remove(this.tenant.getTenantIdOrThrow(), 'digest') };
  }

  /** Digests sent to this tenant so far. */
  @Get('digests')
  digests() {
    return this.store.listForCurrentTenant();
  }
}
