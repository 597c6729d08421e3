import { declareSeam, seamOf } from '../seams/seam-declaration';
import { JOB_PHASES, JobPhase } from './job-phases';

/**
 * Marks a provider as a stage around every job handler (a `JobStage`), in `phase`, at `order`
 * within it (lower runs outer; the library's stages use 10, 20, 30...). The module finds it at
 * bootstrap (`DiscoveryService`); a stage whose `appliesTo` answers false for a processor is left
 * out of that processor's list.
 */
export const TenantJobStage = (phase: JobPhase, order: number): ClassDecorator =>
  declareSeam({ kind: 'stage', phase: JOB_PHASES.indexOf(phase), order });

/** The phase a stage's class declares, if any. */
export function stagePhaseOf(stage: object): JobPhase | undefined {
  const seam = seamOf(stage.constructor, 'stage');
  return seam && JOB_PHASES[seam.phase];
}
