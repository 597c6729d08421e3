/**
 * The phases of the stages around every job handler, outermost first. Each stage names its phase
 * with `@TenantJobStage(phase, order)`; stages of one phase run by their order, lowest outermost.
 *
 * - `observe`: around everything, sees the job's own outcome (metrics, span tags, fair release)
 * - `identity`: completes the job's CLS context (nestjs-cls plugin hooks, `CLS_ID`)
 * - `admission`: may the job run (tenant exists and is active, entitlement, permission)
 * - `deadline`: how long it may run (`timeoutMs`)
 * - `dedupe`: has it run already (`@Idempotent`); innermost, next to the handler
 */
export const JOB_PHASES = ['observe', 'identity', 'admission', 'deadline', 'dedupe'] as const;

export type JobPhase = (typeof JOB_PHASES)[number];
