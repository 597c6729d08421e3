import { Module } from '@nestjs/common';
import { PoolJobRouter } from './pool-job.router';

/** Dedicated pools: `registerQueue({ pools, routing })` and the tiers' `pools`. */
@Module({ providers: [PoolJobRouter], exports: [PoolJobRouter] })
export class TenantPoolsModule {}
