import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { JobStage, TenantJobPipeline } from './tenant-job-pipeline';
import { stagePhaseOf } from './tenant-job-stage.decorator';

/** Registers every `@TenantJobStage` provider of the app with the pipeline, once, at init. */
@Injectable()
export class JobStageExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly pipeline: TenantJobPipeline,
  ) {}

  onModuleInit(): void {
    const seen = new Set<object>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as JobStage | undefined;
      if (!wrapper.isDependencyTreeStatic() || !instance || typeof instance !== 'object') continue;
      if (seen.has(instance) || stagePhaseOf(instance) === undefined) continue;
      seen.add(instance);
      this.pipeline.useStage(instance);
    }
  }
}
