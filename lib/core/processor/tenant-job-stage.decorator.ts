import { SetMetadata } from '@nestjs/common';
import { JobPhase } from './job-phases';

export const JOB_STAGE_PHASE = Symbol('tenant-queue:job-stage-phase');

/**
 * Marks a provider as a stage around every job handler (a `JobStage`), in `phase`. The module
 * finds it at bootstrap (`DiscoveryService`); a stage whose `appliesTo` answers false for a
 * processor is left out of that processor's list.
 */
export const TenantJobStage = (phase: JobPhase): ClassDecorator =>
  SetMetadata(JOB_STAGE_PHASE, phase);

/** The phase a stage's class declares, if any. */
export function stagePhaseOf(stage: object): JobPhase | undefined {
  return Reflect.getMetadata(JOB_STAGE_PHASE, stage.constructor) as JobPhase | undefined;
}
