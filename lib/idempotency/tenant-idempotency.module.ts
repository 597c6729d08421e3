import { Module } from '@nestjs/common';
import { IdempotencyStage } from './idempotency.stage';

/** `@Idempotent` processors: a run that completed is skipped (the `dedupe` phase). */
@Module({ providers: [IdempotencyStage], exports: [IdempotencyStage] })
export class TenantIdempotencyModule {}
