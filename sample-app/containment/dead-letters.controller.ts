import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  NotFoundException,
  Param,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import {
  DeadLetterNotFoundError,
  DeadLetters,
  InjectTenantQueue,
  TenantContext,
  TenantQueue,
  TenantRequiredGuard,
} from '../../lib';
import { FlakyJob } from './flaky-job.processor';

/** Every route works on the request's own tenant (`x-tenant-id`), never on one from the URL. */
@Controller('containment')
@UseGuards(TenantRequiredGuard)
export class DeadLettersController {
  constructor(
    @InjectTenantQueue('containment-demo') private readonly queue: TenantQueue<FlakyJob>,
    private readonly deadLetters: DeadLetters,
    private readonly tenant: TenantContext,
  ) {}

  /** Enqueue a flaky job: `{ "failures": 5 }` exhausts its 3 attempts and is dead-lettered. */
  @Post('jobs')
  async enqueue(@Body() body: FlakyJob) {
    const job = await this.queue.add('flaky', {
      failures: Number(body?.failures ?? 0),
      hang: body?.hang === true,
      reject: body?.reject === true,
    });
    return { jobId: job.id, tenantId: job.tenantId };
  }

  @Get('dead-letters')
  list(@Query('offset') offset?: string, @Query('limit') limit?: string) {
    return this.deadLetters.list(this.tenant.getTenantIdOrThrow(), {
      offset: Number(offset ?? 0),
      limit: Number(limit ?? 20),
    });
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
