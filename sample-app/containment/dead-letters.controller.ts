import {
  BadRequestException,
  Body,
  Controller,
  DefaultValuePipe,
  Delete,
  Get,
  HttpCode,
  NotFoundException,
  Param,
  ParseIntPipe,
  Post,
  Put,
  Query,
  UseGuards,
} from '@nestjs/common';
import {
  DeadLetterNotFoundError,
  DeadLetters,
  InjectTenantQueue,
  TenantContext,
  TenantQueue,
  TenantQueueRegistry,
  TenantRequiredGuard,
} from '../../lib';
import { FlakyFixes, FlakyJob } from './flaky-job.processor';
import { tenantFacingDeadLetter, tenantFacingReason } from '../tenant-facing';

/**
 * Every route works on the request's own tenant (`x-tenant-id`), never on one from the URL, and
 * answers without stack traces or server paths (operators read those on the dashboard).
 */
@Controller('containment')
@UseGuards(TenantRequiredGuard)
export class DeadLettersController {
  constructor(
    @InjectTenantQueue('containment-demo') private readonly queue: TenantQueue<FlakyJob>,
    private readonly deadLetters: DeadLetters,
    private readonly tenant: TenantContext,
    private readonly fixes: FlakyFixes,
    private readonly registry: TenantQueueRegistry,
  ) {}

  /** Enqueue a flaky job: `{ "failures": 5 }` exhausts its 3 attempts and is dead-lettered. */
  @Post('jobs')
  async enqueue(@Body() body: FlakyJob) {
    const job = await this.queue.add('flaky', {
      failures: Number(body?.failures ?? 0),
      hang: body?.hang === true,
      reject: body?.reject === true,
      input: typeof body?.input === 'string' ? body.input : undefined,
    });
    return { jobId: job.id, tenantId: job.tenantId };
  }

  /** One of this tenant's jobs (a replay's id ends in `.r1`); another tenant's is "not found". */
  @Get('jobs/:jobId')
  async job(@Param('jobId') jobId: string) {
    const bull = this.registry.getQueue('containment-demo').bullQueue;
    // State first: once it is final, the job read after it carries the matching outcome.
    const state = await bull.getJobState(jobId);
    const job = await bull.getJob(jobId);
    if (!job || job.data?._tenant?.tenantId !== this.tenant.getTenantIdOrThrow()) {
      throw new NotFoundException(`No job ${jobId} for this tenant`);
    }
    return {
      jobId,
      state,
      result: job.returnvalue ?? null,
      failedReason: tenantFacingReason(job.failedReason),
    };
  }

  /** "Ship the fix": from now on this tenant's flaky jobs succeed, so a replay completes. */
  @Put('fixed')
  fixed() {
    const tenantId = this.tenant.getTenantIdOrThrow();
    this.fixes.fix(tenantId);
    return { tenantId, fixed: true };
  }

  @Get('dead-letters')
  async list(
    @Query('offset', new DefaultValuePipe(0), ParseIntPipe) offset: number,
    @Query('limit', new DefaultValuePipe(20), ParseIntPipe) limit: number,
  ) {
    if (offset < 0 || limit < 1) {
      throw new BadRequestException('offset must be an integer >= 0, limit an integer >= 1');
    }
    const page = await this.deadLetters.list(this.tenant.getTenantIdOrThrow(), { offset, limit });
    return { ...page, items: page.items.map(tenantFacingDeadLetter) };
  }

  @Post('dead-letters/:jobId/replay')
  async replay(@Param('jobId') jobId: string) {
    try {
      return await this.deadLetters.replay(this.tenant.getTenantIdOrThrow(), jobId);
    } catch (error) {
      if (error instanceof DeadLetterNotFoundError) throw new NotFoundException(error.message);
      throw error;
    }
  }

  @Delete('dead-letters/:jobId')
  @HttpCode(200)
  async purge(@Param('jobId') jobId: string) {
    return { removed: await this.deadLetters.purge(this.tenant.getTenantIdOrThrow(), jobId) };
  }
}
