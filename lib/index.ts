// The public API of `nestjs-tenant-queue`: every name here is marked `@publicApi` where it is
// declared, and lib/public-api.snapshot.json lists them (lib/public-api.spec.ts compares the two).
// Internals (queue definitions, the Redis holder, explorers, metadata, internal providers) are
// imported by their own paths inside lib/ and never exported from here.

// The root module, its options and the constants and tokens an app may name.
export { TenantQueueModule } from './tenant-queue.module';
export {
  TENANT_QUEUE_OPTIONS_TYPE,
  TENANT_QUEUE_ASYNC_OPTIONS_TYPE,
} from './tenant-queue.module-definition';
export {
  ENVELOPE_KEY,
  TENANT_JOB_CONTEXT_TYPE,
  DEFAULT_TENANT_ID_PATTERN,
  getTenantQueueToken,
} from './tenant-queue.constants';
export type {
  TenantQueueModuleOptions,
  TenantResolutionOptions,
  TenantResolverName,
  TenantEnvelopeOptions,
  TenantGuardOptions,
  TenantSchedulerOptions,
  TenantQueuePortOptions,
  TenantQueuePortProvider,
} from './interfaces';
export type { TenantJobClsOptions } from './core/cls';
export { TenantJobClsInitContext } from './core/cls';

// Tenant context: who the current work is for, how a request gets it, and what a job carries.
export { TenantContext, TenantResolutionMiddleware, tenantLogFields } from './core/context';
export type { TenantRunInput, TenantLogRef } from './core/context';
export { ACTOR_TYPES } from './interfaces';
export type {
  ActorType,
  TenantActor,
  TenantEnvelope,
  TenantResolutionStrategy,
} from './interfaces';

// Producing jobs: the queue, its injection and registration, and the job options.
export { TenantQueue, InjectTenantQueue } from './core/queues';
export type { TenantBulkJob, TenantJobOptions } from './core/queues';
export { TenantQueueRegistry } from './core/queues/tenant-queue.registry';
export type {
  RegisterTenantQueueOptions,
  TenantPoolRouting,
  TenantRoute,
  EnqueuedJob,
} from './interfaces';

// Processing jobs: the processor decorator and host, worker events, per-job run options and runs.
export {
  TenantProcessor,
  TenantWorkerHost,
  OnTenantWorkerEvent,
  withRunOptions,
  RUN_OPTIONS_KEY,
  runIdentity,
  runInWorkerThread,
} from './core/processor';
export type {
  TenantProcessorOptions,
  TenantWorkerEvent,
  JobRunOptions,
  RunIdentity,
  WorkerThreadOptions,
} from './core/processor';
export type { TenantJob } from './interfaces';

// Exactly-once effects: the idempotency decorator and the run markers of a database.
export { Idempotent } from './idempotency/idempotent.decorator';
export type { IdempotentOptions } from './idempotency/idempotent.decorator';
export { claimRun, runOnce, runMarkerTableSql } from './idempotency/run-once';
export type { RunMarkerClient, RunOnceOptions, RunOnceResult } from './idempotency/run-once';

// Request-scoped providers inside jobs: the job's DI scope and context id strategy.
export { JobScope, TenantContextIdStrategy, TenantJobRequest } from './core/scope';
export type { TenantContextIdStrategyOptions, TenantRequestPayload } from './core/scope';

// Tenants: the application ports (interface plus same-named token) and the tiers.
export { TenantDirectory, EntitlementChecker, ActorPermissionChecker } from './interfaces';
export type { TenantRecord, TenantStatus, TenantPage } from './interfaces';
export { TenantTiers } from './core/tenants';
export type {
  TenantProfile,
  TenantTierOptions,
  TenantLimits,
  TenantRateLimit,
} from './core/tenants';

// Job guards: the module's guards and decorators, and what a cancelled job tells.
export {
  isTenantJobContext,
  TenantRequiredGuard,
  RequiresEntitlement,
  RequiresActorPermission,
  UseJobGuards,
  JobCancellations,
} from './guards';
export type { JobCancelledEvent, JobCancelledListener } from './guards';
export { parseCancelReason } from './core/errors';
export type { CancelReason } from './core/errors';

// Errors: one base class, one class per mistake.
export {
  TenantQueueError,
  MissingTenantError,
  InvalidTenantIdError,
  InvalidPayloadError,
  InvalidEnvelopeError,
  InvalidTenantQueueOptionsError,
  UnknownTenantQueueError,
  JobCancelledError,
  JobTimeoutError,
  TIMEOUT_REASON_PREFIX,
  NonRetryableError,
  NonErrorThrownError,
  TenantNotActiveError,
  PortNotConfiguredError,
  JobScopeUnavailableError,
  TenantQueueRootMissingError,
  InvalidJobOptionsError,
  JobIdTakenError,
  EnqueueUnavailableError,
  RedisUnavailableAtBootError,
  TenantSourceConflictError,
  InvalidJobIdError,
  RedisBackendRequiredError,
  MissingPeerDependencyError,
} from './core/errors';
export type { TenantSourceReading } from './core/errors';
export { UnknownTierError } from './core/tenants';
export { TenantBacklogFullError, InvalidLaneError, InvalidFairKeyError } from './fairness';
export { UnknownPoolError, PoolRoutingUnavailableError } from './pools';
export {
  DeadLetterNotFoundError,
  DeadLetterResolvedError,
  InvalidDeadLetterQueryError,
} from './dead-letters';
export { InvalidRunMarkerTableError } from './idempotency/invalid-run-marker-table.error';
export { TenantPortUnavailableError } from './guards';
export { InvalidScheduleError } from './scheduler';
export { TenantQueueExceptionFilter } from './tenant-queue-exception.filter';

// Dead letters: jobs that failed for good, per tenant.
export { DeadLetters } from './dead-letters';
export type {
  DeadLetter,
  DeadLetterListener,
  DeadLetterPage,
  DeadLetterQuery,
  DeadLetterReason,
} from './dead-letters';

// Schedules: per-tenant cron methods, schedules as data, and their job ids.
export {
  TenantScheduler,
  TenantCron,
  SchedulerClock,
  JOB_ID_SEPARATOR,
  formatOccurrence,
  tenantCronJobId,
  tenantScheduleJobId,
} from './scheduler';
export type {
  TenantCronOptions,
  TenantCronRun,
  MissedRunPolicy,
  ScheduleTimezone,
  SchedulerTickResult,
  TenantSchedule,
  TenantScheduleInput,
  TenantScheduleJob,
} from './scheduler';

// Fair share: the fair gate's controls, chunked enqueue and the slow lane.
export { TenantFairness, addChunked } from './fairness';
export type {
  AddChunkedOptions,
  ChunkInfo,
  TenantFairnessOptions,
  TenantSlowLaneOptions,
  TenantFairnessState,
  SlowLaneEvent,
} from './fairness';

// Metrics and visibility: the inspector, the metrics sink and the live-state ports.
export {
  TenantQueueInspector,
  MetricsSink,
  noopMetricsSink,
  TenantQueueStateSource,
  TenantQueueControls,
  LAG_BUCKETS_MS,
} from './metrics';
export type {
  TenantQueueStats,
  TenantLagStats,
  TenantResultCounts,
  TenantListQuery,
  JobResult,
  TenantQueueMetricsOptions,
  TenantQueueLiveState,
  JobExplanation,
  JobGatePlace,
  JobHold,
  ExplainedJobState,
  GateJobAnswer,
  TenantQueueSummary,
  QueueJobCounts,
  TenantLagHistory,
  TenantLagPoint,
} from './metrics';

// The dashboard (also at `nestjs-tenant-queue/dashboard`).
export { TenantQueueDashboardModule, DASHBOARD_ACTION_HEADER } from './dashboard';
export type { TenantQueueDashboardOptions } from './dashboard';

// Testing: the in-memory module and ports (also at `nestjs-tenant-queue/testing`).
export {
  InMemoryTenantDirectory,
  InMemoryEntitlementChecker,
  InMemoryActorPermissionChecker,
  TenantQueueTestingModule,
  TenantQueueTesting,
} from './testing';
export type { TestJob, TestJobState } from './testing';
