import { DEFAULT_TENANT_ID_PATTERN } from './tenant-queue.constants';

export const Messages = {
  missingTenant: (queue: string, name: string) =>
    `Job "${name}" on queue "${queue}" is tenant-scoped but no tenant is in context. ` +
    `Enqueue it inside a request that carries a tenant, inside a running tenant job, ` +
    `or use TenantQueue.addForTenant(tenantId, ...) for system work.`,
  missingTenantAfterJob: (queue: string, name: string, jobId: string | undefined) =>
    `Job "${name}" on queue "${queue}" is tenant-scoped, but this code runs after the job that ` +
    `started it (${jobId ?? 'no id'}) ended: a job's tenant is cleared when the job ends, so a ` +
    `timer, listener or promise it left running has none. Enqueue it before process() returns ` +
    `(await that work), or take the tenant from the job (job.tenant.tenantId) and use ` +
    `TenantQueue.addForTenant(tenantId, ...).`,
  missingTenantAfterJobInContext: (jobId: string | undefined) =>
    `No tenant in the current context: this code runs after the job that started it ` +
    `(${jobId ?? 'no id'}) ended, and a job's tenant is cleared when the job ends. Use the ` +
    `tenant before process() returns (await that work), or take it from the job (job.tenant.tenantId).`,
  missingTenantInContext: () =>
    `No tenant in the current context. Send the tenant (e.g. the "x-tenant-id" header) or wrap ` +
    `the call in TenantContext.run(tenantId, fn).`,
  invalidTenantId: (value: unknown, pattern: RegExp) =>
    `Invalid tenant id ${JSON.stringify(truncate(value))}: it must match ${pattern}` +
    (String(pattern) === String(DEFAULT_TENANT_ID_PATTERN)
      ? `. Use 1-64 characters of letters, digits, "_", "." or "-", starting with a letter or digit.`
      : ` (the app's tenantIdPattern), be at most 64 characters and hold no unpaired UTF-16 surrogate.`),
  invalidPayload: (queue: string, name: string, why: string) =>
    `Payload of job "${name}" on queue "${queue}" ${why}. Pass a plain JSON object; the module ` +
    `adds the "_tenant" envelope itself.`,
  invalidEnvelope: (why: string) =>
    `The job's "_tenant" envelope is invalid: ${why}. The job was not run. Enqueue jobs through ` +
    `TenantQueue so the envelope is built and validated for you.`,
  missingEnvelope: (queue: string, name: string) =>
    `Job "${name}" on tenant-scoped queue "${queue}" has no "_tenant" envelope, so it was not run ` +
    `under any tenant. Enqueue it through TenantQueue, or declare the job name in registerQueue({ systemJobs }).`,
  tenantlessJobRequires: (queue: string, name: string, processor: string, requirements: string) =>
    `Job "${name}" on queue "${queue}" was enqueued without a tenant (a system job), but ` +
    `${processor} requires ${requirements}, which only a tenant's job can be checked for. Enqueue ` +
    `it for a tenant with addForTenant(tenantId, ...), or handle tenantless jobs in a processor ` +
    `without these requirements.`,
  missingPeer: (entryPoint: string, peer: string, spec: string) =>
    `${entryPoint} needs ${peer}, an optional peer dependency of nestjs-tenant-queue that is not ` +
    `installed. Install it: npm install "${spec}"`,
  invalidOptions: (field: string, why: string) =>
    `Invalid TenantQueueModule option "${field}": ${why}.`,
  connectionString: () =>
    `it is a string; write { url: 'redis://host:port' } (BullMQ's form), ioredis options ` +
    `{ host, port }, or pass an ioredis instance`,
  connectionNotObject: (value: unknown) =>
    `it is ${value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`}; ` +
    `give ioredis options ({ host, port }), { url: 'redis://host:port' }, or an ioredis instance`,
  asyncOptionsNotObject: (source: string, value: unknown) =>
    `forRootAsync's ${source} gave ${kindOf(value)}, not the options object: return ` +
    `{ connection, ... } from it (an arrow function with a block body needs its return)`,
  rootOptionsNotObject: (value: unknown) =>
    `forRoot() was given ${kindOf(value)}, not the options object: pass { connection, ... } ` +
    `(e.g. forRoot({ connection: { url: 'redis://localhost:6379' } })), or use forRootAsync ` +
    `to build them from your config`,
  asyncOptionsNoMethod: (name: string) =>
    `forRootAsync's useClass/useExisting ${name} has no createTenantQueueOptions() method; ` +
    `give it createTenantQueueOptions() returning { connection, ... } (or a Promise of it)`,
  connectionNamesNoServer: (keys: string[]) =>
    `it names no Redis server (${keys.length ? `keys: ${keys.join(', ')}` : 'an empty object'}); ` +
    `give host and port, url, path or sentinels. ioredis would connect to 127.0.0.1:6379 and ` +
    `this app would write its jobs there`,
  connectionRetries: (value: unknown, cluster = false) =>
    cluster
      ? `the ioredis Cluster's nodes have maxRetriesPerRequest: ${String(value)}, and BullMQ's ` +
        `workers need null; create it with new Cluster(nodes, { redisOptions: { ` +
        `maxRetriesPerRequest: null } })`
      : `the ioredis instance has maxRetriesPerRequest: ${String(value)}, and BullMQ's workers ` +
        `need null; create it with new IORedis(url, { maxRetriesPerRequest: null }), or pass its ` +
        `options instead of the instance`,
  connectionKeyPrefix: (keyPrefix: unknown) =>
    `it sets the ioredis keyPrefix ${JSON.stringify(String(keyPrefix))}, which BullMQ cannot run ` +
    `under (its scripts name their own keys); drop keyPrefix and give the module's own prefix ` +
    `instead, e.g. forRoot({ prefix: '${
      String(keyPrefix)
        .replace(/[^A-Za-z0-9_.-]/g, '')
        .slice(0, 32) || 'tq'
    }' }) ` +
    `(1-32 letters, digits, "_", "." or "-"): every key of the module and of its BullMQ queues ` +
    `starts with it, inside each queue's Redis Cluster hash tag`,
  unknownOption: (suggestion: string | undefined, known: readonly string[]) =>
    `is not a known option${suggestion === undefined ? '' : `; did you mean "${suggestion}"?`} ` +
    `(known here: ${known.join(', ')})`,
  unknownQueue: (name: string) =>
    `Queue "${String(truncate(name))}" is not registered. Add TenantQueueModule.registerQueue({ ` +
    `name: '${String(truncate(name))}' }) ` +
    `to the imports of the module that uses it.`,
  processorQueueUnknown: (className: string, name: string) =>
    `@TenantProcessor('${name}') on ${className}: queue "${name}" is not registered. Add ` +
    `TenantQueueModule.registerQueue({ name: '${name}' }) to the imports of the module that ` +
    `provides ${className}.`,
  processorNotHost: (className: string) =>
    `@TenantProcessor class ${className} must extend TenantWorkerHost and implement process(job).`,
  workerEventUnbound: (className: string, method: string, event: string, processor: boolean) =>
    `@OnTenantWorkerEvent('${event}') on ${className}.${method}: no worker of the module calls ` +
    `it, since ${className} is not a @TenantProcessor` +
    (processor
      ? ` and no TenantBullMqModule.registerQueue declares its @nestjs/bullmq queue. Declare that ` +
        `queue with TenantBullMqModule.registerQueue({ name }) in place of ` +
        `BullModule.registerQueue({ name }) (its jobs then run in their tenant, listeners too), ` +
        `make ${className} a @TenantProcessor extending TenantWorkerHost, or use @nestjs/bullmq's ` +
        `@OnWorkerEvent on a queue the module does not manage.`
      : `. Move the method to the @TenantProcessor class of the queue whose events it wants.`),
  processorTimeoutInvalid: (className: string, queue: string, timeoutMs: unknown, max: number) =>
    `@TenantProcessor('${queue}') on ${className}: timeoutMs ${String(timeoutMs)} is not an ` +
    `integer from 1 to ${max} ms (about 24.8 days). Pass such a deadline, or leave timeoutMs out ` +
    `for none.`,
  processorOptionInvalid: (
    className: string,
    queue: string,
    problem: { option: string; value: unknown; must: string },
  ) =>
    `@TenantProcessor('${queue}') on ${className}: ${problem.option} ${String(problem.value)} is ` +
    `not ${problem.must}. Pass such a value, or leave ${problem.option} out for BullMQ's default.`,
  processorOptionUnknown: (className: string, queue: string, option: string, why: string) =>
    `@TenantProcessor('${queue}') on ${className}: option "${option}" ${why}. Fix its name: ` +
    `BullMQ would take it unread.`,
  processorPipesIgnored: (className: string, queue: string) =>
    `@TenantProcessor('${queue}') on ${className}: its @UsePipes pipes never run on jobs. Pipes ` +
    `transform a handler's decorated parameters, and process(job) has none. Check job.data in ` +
    `process() (e.g. class-validator's validate()), or in a @UseJobGuards guard or an interceptor, ` +
    `which do run on every job.`,
  invalidIdempotentOption: (field: string, value: unknown, max: number) =>
    `@Idempotent option "${field}" is ${typeof value === 'string' ? JSON.stringify(value) : String(value)}: ` +
    `it must be a whole number of milliseconds from 1 to ${max}. Pass such a number, or leave ` +
    `"${field}" out for its default.`,
  duplicateProcessor: (queue: string) =>
    `Two @TenantProcessor classes consume queue "${queue}". Use one class per queue and dispatch on job.name.`,
  jobScopeOutsideJob: (method: string) =>
    `JobScope.${method}() was called outside a job. JobScope works inside a @TenantProcessor's ` +
    `process() and the code it awaits; elsewhere (HTTP requests, scripts, worker events) release ` +
    `resources yourself with try/finally.`,
  notDisposable: (what: string) =>
    `JobScope.use() got ${what}, which has no [Symbol.asyncDispose] or [Symbol.dispose] method. ` +
    `Pass a disposer as the second argument: scope.use(resource, (r) => r.close()).`,
  jobScopeDisposerFailed: (queue: string, name: string, why: string) =>
    `a JobScope disposer of job "${name}" on queue "${queue}" threw: ${why}. The job's own outcome ` +
    `stands; make the disposer idempotent and let it swallow "already closed" errors.`,
  invalidStrategyOption: (field: string, value: unknown) =>
    `Invalid TenantContextIdStrategy option "${field}": ${JSON.stringify(value)}. Pass a positive integer.`,
  customResolverResult: (got: string) =>
    `resolution.custom returned ${got}, not a tenant id. It must return the tenant id (a string) ` +
    `or undefined synchronously: the tenant is resolved before the route runs, and a Promise ` +
    `would never be awaited. Look up an async tenant in your own middleware (or an auth guard ` +
    `that sets req.user, with the jwtClaim strategy) and have resolution.custom read what it set.`,
  tenantRequiredHttp: (sources: readonly string[]) =>
    sources.length > 0
      ? `This route needs a tenant. Send it in ${sources.join(' or ')}.`
      : `This route needs a tenant, and this app found none for the request.`,
  invalidCron: (expression: string, why: string) =>
    `Invalid cron expression ${JSON.stringify(expression)}: ${why}. Use five fields ` +
    `("minute hour day-of-month month day-of-week", e.g. "30 9 * * 1-5") or a macro like "@daily".`,
  invalidTimezone: (timezone: string) =>
    `Unknown time zone ${JSON.stringify(timezone)}. Use "UTC", an IANA zone such as ` +
    `"Europe/Kyiv" or "America/New_York", or "tenant" for the tenant's own zone.`,
  invalidSchedule: (field: string, why: string) => `Invalid schedule option "${field}": ${why}.`,
  lateAfterBelowTick: (lateAfter: number, tickInterval: number, least: number) =>
    `it is ${lateAfter} ms, and a tick claims an occurrence up to a tickInterval ` +
    `(${tickInterval} ms) plus the tick's own time after it is due, so on-time runs would count ` +
    `as missed (and "skip" never runs them). Set lateAfter to at least ${least} ms (2 x ` +
    `tickInterval), or lower tickInterval`,
  schedulePreviewCount: (count: number, max: number) =>
    `TenantScheduler.next: count ${String(count)} is above ${max}, the most runs one preview ` +
    `lists. Ask for ${max} or fewer.`,
  scheduleJobParent: () =>
    `is one fixed job for every occurrence: each run would join it as a child, and fail once ` +
    `it is gone. Drop parent; to start a flow at each run, add it from the scheduled job's ` +
    `processor`,
  tenantZoneUnknown: (tenantId: string, zone: string) =>
    `tenant ${tenantId} has an unknown time zone ${JSON.stringify(zone)} in the TenantDirectory; ` +
    `using UTC. Give the tenant an IANA zone (e.g. "Europe/Kyiv"), or none for UTC`,
  unknownSchedule: (tenantId: string, key: string) =>
    `Tenant "${tenantId}" has no schedule "${key}". Create it with TenantScheduler.upsert() first.`,
  cronNeedsDirectory: (name: string) =>
    `@TenantCron "${name}" fans out to every active tenant, so it needs a TenantDirectory. ` +
    `Provide one (the module's "directory" option, or a provider for the TenantDirectory token).`,
  cronQueueTaken: (queue: string) =>
    `Queue "${queue}" already has a worker (a @TenantProcessor), so @TenantCron jobs cannot run on it. ` +
    `Give the @TenantCron its own "queue" option (the scheduler runs that queue's worker).`,
  duplicateCron: (name: string) =>
    `Two @TenantCron methods are named "${name}". Give each a unique "name" option.`,
  jobTimedOut: (queue: string, name: string, timeoutMs: number) =>
    `[TIMEOUT] Job "${name}" on queue "${queue}" ran past its ${timeoutMs} ms timeout. Make the ` +
    `handler honour the AbortSignal it receives, or raise timeoutMs for this job or processor.`,
  unstorableResult: (queue: string, name: string, why: string) =>
    `Job "${name}" on queue "${queue}" returned a value BullMQ cannot store as JSON (${why}). ` +
    `The handler ran, so the job is not retried. Return plain JSON data (no BigInt, no cycles), ` +
    `e.g. a BigInt as a string.`,
  emptyErrorMessage: (name: unknown) =>
    `The job's code (its handler, a job guard or cls.setup) threw ${JSON.stringify(truncate(String(name)))} with an empty message, so the ` +
    `failure said nothing. Give the error a message that says what went wrong (its stack is kept).`,
  nonErrorThrown: (description: string) =>
    `The job's code (its handler, a job guard or cls.setup) threw a non-Error value (${description}). Throw an Error (or a subclass) so ` +
    `the failure keeps a message and a stack.`,
  unreadableErrorThrown: (why: string) =>
    `The job's code (its handler, a job guard or cls.setup) threw an Error BullMQ cannot read (${why}). Throw an Error whose message ` +
    `is a string and whose message, name and stack can be read.`,
  bullMovedNameThrown: (name: string, message: string) =>
    `The job's code (its handler, a job guard or cls.setup) threw an error named ${name}, which BullMQ takes to mean the handler moved ` +
    `its job itself (job.moveToDelayed, moveToWait or moveToWaitingChildren), and it did not: ` +
    `failed as any other error. Rename your error class. Its message: ${message}`,
  cancelLookalike: (message: string) =>
    `The job's code (its handler, a job guard or cls.setup) threw an error whose message reads like a cancellation, which it is not ` +
    `(throw JobCancelledError to cancel a job): ${message}`,
  reasonLookalike: (message: string) =>
    `The job's code (its handler, a job guard or cls.setup) threw an error whose message reads like the module's timeout or BullMQ's ` +
    `stall, which it is not (its dead letter says ATTEMPTS_EXHAUSTED or NON_RETRYABLE): ${message}`,
  invalidRunOptions: (why: string) =>
    `Invalid run options ("_run" key of the job data): ${why}. Build them with withRunOptions(data, ` +
    `{ timeoutMs, runId }): timeoutMs a positive integer, runId 1-200 characters without ":".`,
  deadLetterNotFound: (tenantId: string, jobId: string) =>
    `Tenant "${tenantId}" has no dead letter ${JSON.stringify(truncate(jobId))}. List them with DeadLetters.list(tenantId).`,
  tickFailed: (why: string) =>
    `scheduler tick failed: ${why.replace(/\.+$/, '')}. Logged once until a tick succeeds; until then no schedule ` +
    `fires from this process, and after 5 tick intervals the health check says "stalled".`,
  scheduleEnqueueFailed: (
    failed: number,
    claimed: number,
    member: string,
    why: string,
    claimTimeoutMs: number,
  ) =>
    `cannot enqueue ${failed} of ${claimed} claimed schedule occurrence(s); each is re-sent after ` +
    `scheduler.claimTimeout (${claimTimeoutMs} ms) under the same job id. The first, ${member}: ${why}`,
  schedulesMissedRuns: (schedules: number, missed: string, caughtUp: number, first: string) =>
    `${schedules} schedules missed runs while no scheduler ticked: ${missed} run(s) in all, of ` +
    `which their missed policies run ${caughtUp} now (each schedule's line is logged at debug ` +
    `level); the first, ${first}`,
  ticksBack: (failed: number) => `scheduler ticks succeed again, after ${failed} failed tick(s)`,
  badCancelReason: (reason: unknown) =>
    `JobCancelledError: reason ${JSON.stringify(reason)} is not a cancel reason. Use 1-64 ` +
    `letters, digits, "_", "-" or "." (e.g. 'OVER_QUOTA'): it is read back out of the job's ` +
    `failedReason ("[cancelled:<reason>] ...").`,
  deadLetterPage: (field: string, value: unknown, want: string) =>
    `DeadLetters.list: ${field} ${String(value)} is not ${want}. Leave it out for the default ` +
    `(offset 0, limit 20); a limit above 100 is taken as 100.`,
  deadLetterPurgeId: (jobId: unknown) =>
    `DeadLetters.purge: job id ${describeId(jobId)} is not a job id. Pass the id of one ` +
    `dead letter, or leave it out (purge(tenantId)) to remove all of the tenant's letters.`,
  deadLetterJobId: (method: string, jobId: unknown) =>
    `DeadLetters.${method}: job id ${describeId(jobId)} is not a job id; nothing was done. Pass ` +
    `the id of one dead letter as DeadLetters.list gave it (DeadLetter.jobId): a non-empty string.`,
  deadLetterResolved: (tenantId: string, jobId: string, at: number) =>
    `Dead letter "${jobId}" of tenant "${tenantId}" is resolved: its job was retried outside ` +
    `DeadLetters.replay (BullMQ's job.retry(), bull-board's Retry) and completed at ` +
    `${new Date(at).toISOString()}. A replay would run the work again; purge the letter instead.`,
  deadLetterRetrying: (tenantId: string, jobId: string) =>
    `Dead letter "${jobId}" of tenant "${tenantId}" cannot be replayed: its job was retried ` +
    `outside DeadLetters.replay (BullMQ's job.retry(), bull-board's Retry) and is queued or ` +
    `running again. Wait for it: it resolves the letter when it completes, or dead-letters again.`,
  replayTenantNotActive: (tenantId: string, status: string) =>
    `Cannot replay a dead letter of tenant "${tenantId}": the tenant is ${status}. Reactivate the ` +
    `tenant in your TenantDirectory first, or purge the dead letter.`,
  tenantNotActive: (tenantId: string, status: string) =>
    status === 'unknown'
      ? `Tenant "${tenantId}" does not exist in the tenant directory. Check the tenant id, or add ` +
        `the tenant to your TenantDirectory.`
      : `Tenant "${tenantId}" is ${status}, so its work is refused. Reactivate the tenant in your ` +
        `TenantDirectory, then send the request or enqueue the job again.`,
  tenantStatusUnrecognised: (tenantId: string, status: unknown) =>
    `Tenant "${tenantId}" has status ${JSON.stringify(truncate(status))} in the tenant directory; ` +
    `only "active", "suspended" and "deleted" are understood. Fix the TenantDirectory.getTenant() result.`,
  tenantRecordOfAnother: (tenantId: string, otherId: unknown) =>
    `TenantDirectory.getTenant("${tenantId}") returned the record of tenant ` +
    `${JSON.stringify(truncate(otherId))}, so its status says nothing about "${tenantId}" and the ` +
    `work is refused. Fix the TenantDirectory.getTenant() result: the record of that id, or null.`,
  tenantRecordOfAnotherIgnored: (tenantId: string, otherId: unknown, instead: string) =>
    `TenantDirectory.getTenant("${tenantId}") returned the record of tenant ` +
    `${JSON.stringify(truncate(otherId))}, which says nothing of "${tenantId}": ${instead}, and the ` +
    `guards refuse its jobs. Fix the TenantDirectory.getTenant() result: the record of that id, or null.`,
  notEntitled: (tenantId: string, feature: string) =>
    `Tenant "${tenantId}" is not entitled to "${feature}" (EntitlementChecker said no), so the job ` +
    `was cancelled. Grant the feature and enqueue the job again.`,
  actorNotPermitted: (tenantId: string, actor: string, permission: string) =>
    `Actor ${actor} may not "${permission}" in tenant "${tenantId}" any more ` +
    `(ActorPermissionChecker said no), so the job was cancelled.`,
  portAnswerNotBoolean: (call: string, answer: unknown) =>
    `${call} answered ${kindOf(answer)}` +
    `${typeof answer === 'string' || typeof answer === 'number' ? ` (${JSON.stringify(truncate(answer))})` : ''}, ` +
    `not true or false, so the job was cancelled (a guard fails closed). Fix the checker: ` +
    `resolve its Promise with a boolean (a missing return or await gives undefined).`,
  anonymousActor: (tenantId: string, permission: string) =>
    `The job needs permission "${permission}" but was enqueued by an anonymous actor in tenant ` +
    `"${tenantId}". Enqueue it from an authenticated request, or as system work with addForTenant().`,
  jobForbidden: (why: string) =>
    `A guard on the processor refused the job (${why}). If it is an HTTP guard, let it step aside ` +
    `for jobs with isTenantJobContext(context).`,
  portUnavailable: (port: string, why: string) =>
    `${port} is unavailable (${why}); the attempt failed, and BullMQ retries the job while it has ` +
    `attempts left (attempts/backoff): an outage never cancels it. Check the port's backing service.`,
  portTimedOut: (port: string, ms: number) =>
    `${port} did not answer within ${ms} ms (guards.portTimeoutMs); the attempt failed, and BullMQ ` +
    `retries the job while it has attempts left (attempts/backoff): an outage never cancels it.`,
  directoryLookupTimedOut: (tenantId: string, ms: number) =>
    `TenantDirectory.getTenant("${tenantId}") did not answer within ${ms} ms (guards.portTimeoutMs). ` +
    `Check the directory's backing service.`,
  directoryListTimedOut: (cursor: string | null, ms: number) =>
    `TenantDirectory.listActiveTenants(${cursor === null ? 'null' : JSON.stringify(cursor)}) did not answer within ${ms} ms ` +
    `(guards.portTimeoutMs). Check the directory's backing service.`,
  portNotConfigured: (port: string, option: string, processor: string, decorator: string) =>
    `${processor} uses ${decorator} but no ${port} is configured. Pass ` +
    `TenantQueueModule.forRoot({ ..., ${option}: { useClass | useExisting | useFactory | useValue } }).`,
  replayTenantUnavailable: (tenantId: string, jobId: string, why: string) =>
    `The status of tenant "${tenantId}" cannot be checked right now (${why}), so dead letter ` +
    `"${truncate(jobId)}" was not replayed; it is kept. Replay it again once the TenantDirectory ` +
    `answers.`,
  tenantUnavailableHttp: (tenantId: string) =>
    `The status of tenant "${tenantId}" cannot be checked right now. Try again shortly.`,
  unsignedEnvelope: () =>
    'it is not signed, and this worker requires signed envelopes (envelope.secret)',
  badSignature: () =>
    'its signature does not match any configured envelope.secret (altered, or signed with a retired secret)',
  tenantBacklogFull: (queue: string, tenantId: string, backlog: number, limit: number) =>
    `Tenant "${tenantId}" already has ${backlog} jobs waiting on fair queue "${queue}" (maxBacklog ` +
    `${limit}); nothing was enqueued. Retry later, or raise registerQueue({ fairness: { maxBacklog } }).`,
  noLanes: (queue: string) =>
    `Queue "${queue}" declares no lanes, so a job cannot ask for one; nothing was enqueued. Drop ` +
    `the "lane" option, or declare lanes with registerQueue({ name: '${queue}', fairness: { lanes } }).`,
  unknownLane: (queue: string, lane: string, lanes: string[]) =>
    `Queue "${queue}" has no lane "${lane}" (its lanes: ${lanes.join(', ')}); nothing was enqueued. ` +
    `Use one of those lanes, or add "${lane}" to its fairness.lanes.`,
  invalidFairKey: (value: unknown, max: number) =>
    `Invalid fairKey ${JSON.stringify(truncate(value))}: it must be a string of 1-${max} ` +
    `printable ASCII characters (no spaces); nothing was enqueued. Pass an id (a user id, a ` +
    `hash of a longer value).`,
  fairKeyWithoutTenant: (queue: string, name: string) =>
    `Job "${name}" on queue "${queue}" has a fairKey but no tenant; nothing was enqueued. A fair ` +
    `key orders jobs inside a tenant: enqueue it in a tenant's context (or addForTenant), or drop fairKey.`,
  fairKeysOff: (queue: string) =>
    `Queue "${queue}" does not use fair keys, so a job cannot name one; nothing was enqueued. ` +
    `Drop the "fairKey" option, or turn them on with registerQueue({ name: '${queue}', ` +
    `fairness: { fairKey: 'job' } }) (or 'actor').`,
  invalidRateLimit: (why: string) =>
    `Invalid rate limit: ${why}. Pass { max, per, burst? } (jobs per "per" ms), false for no ` +
    `limit, or null to go back to the tier/directory/queue default.`,
  fairLayoutChanged: (queue: string, before: string, ours: string, moved: number, held: number) =>
    `queue "${queue}" was run by a process with other fairness lanes or fair keys (there: ` +
    `${before}; here: ${ours}): the ${moved} job(s) queued there were moved into this ` +
    `process's backlog keys, in their order (into the default lane where their lane is not ` +
    `declared here; ${held} held in the fair gate in all). While processes with both settings ` +
    `run, each moves the other's backlog into its own every 30 s, so jobs may wait that long ` +
    `out of turn: give every process the same registerQueue fairness options (during a rolling ` +
    `deploy that changes lanes or fair keys, this passes once the last process with the old ` +
    `settings stops).`,
  heldWithoutFairness: (queue: string, waiting: number, released: number) =>
    released > 0
      ? `queue "${queue}" runs without fairness here, and ${released} job(s) a fair gate held ` +
        `(added by a process with fairness, held until their turn) were moved into BullMQ's wait ` +
        `list, to run now outside any turn, as no worker process with fairness is running. If ` +
        `the queue should stay fair, give this process the same registerQueue fairness options.`
      : `queue "${queue}" runs without fairness here, and ${waiting} job(s) wait held by the fair ` +
        `gate of a worker process with fairness on this Redis, which admits them in turn; this ` +
        `process's jobs skip that gate. Give every process the same registerQueue fairness ` +
        `options (once no worker process with fairness runs any more, this process runs them).`,
  fairnessOff: (queue: string) =>
    `Queue "${queue}" has no fairness. Register it with registerQueue({ name: '${queue}', fairness: {} }) ` +
    `to use TenantFairness on it.`,
  budgetNeedsFairness: (queue: string, budget: string) =>
    `Invalid TenantQueueModule option "registerQueue(${queue}).budget": budget "${budget}" shares ` +
    `the fair gate's caps and rate limits, so the queue needs fairness. Add fairness: {} to ` +
    `registerQueue({ name: '${queue}' }), or remove budget.`,
  budgetMismatch: (budget: string, field: string, queue: string, other: string) =>
    `Invalid TenantQueueModule option "registerQueue(${queue}).fairness.${field}": queues "${other}" ` +
    `and "${queue}" share budget "${budget}", so they need the same ${field} (one cap and one rate ` +
    `limit per tenant for the whole budget). Give both queues the same value.`,
  invalidFairnessValue: (what: string, why: string) =>
    `Invalid ${what}: ${why}. Pass a finite number in range, or null to clear the runtime override.`,
  unknownPool: (queue: string, tenantId: string, pool: unknown, source: string, pools: string[]) =>
    `Tenant "${tenantId}" is routed to pool ${JSON.stringify(truncate(pool))} of queue "${queue}" ` +
    `(by ${source}), but the queue declares no such pool (pools: ${[queue, ...pools].join(', ')}); ` +
    `nothing was enqueued. Add it to registerQueue({ name: '${queue}', pools }) and start its ` +
    `workers, or fix the ${source}.`,
  poolRoutingUnavailable: (queue: string, tenantId: string, why: string) =>
    `Cannot route tenant "${tenantId}" on queue "${queue}" to its pool: the tenant directory ` +
    `failed (${why}); nothing was enqueued. Retry shortly, or give the tenant a static ` +
    `registerQueue({ routing: { '${tenantId}': pool } }) entry, which needs no directory.`,
  poolDirectoryFallback: (queue: string, tenantId: string, pool: string, why: string) =>
    `tenant directory failed (${why}); routed tenant "${tenantId}" on queue "${queue}" to ` +
    `"${pool}", the pool this process last routed it to.`,
  queueDeclaredTwice: (queue: string, fields: string[]) =>
    `Queue "${queue}" is registered twice with different options (${fields.join(', ')}): one queue ` +
    `has one set of options, so one registration's would be dropped, which one by module order. ` +
    `Register it once with all its options (TenantQueueModule.registerQueue or ` +
    `TenantBullMqModule.registerQueue) in a module that exports it, or give every ` +
    `registerQueue({ name: '${queue}' }) the same options.`,
  rootImportedTwice: (fields: string[]) =>
    `TenantQueueModule.forRoot is imported twice with different options (${fields.join(', ')}): ` +
    `the module is global and the app runs with one forRoot's options, so the other's would be ` +
    `dropped. Import TenantQueueModule.forRoot (or forRootAsync) once, in ` +
    `AppModule, and TenantQueueModule.registerQueue in the modules that use a queue.`,
  poolNameTaken: (pool: string, owner: string) =>
    `"${pool}" is already ${owner}; a pool is its own BullMQ queue, so its name must not be taken ` +
    `by another queue or another queue's pool. Rename the pool (e.g. "<queue>-<tenant>").`,
  unknownConsumedPool: (queue: string, pool: unknown, pools: string[]) =>
    `@TenantProcessor('${queue}', { pools }) names ${JSON.stringify(truncate(pool))}, which is not ` +
    `a pool of "${queue}". Pick from: ${pools.join(', ')} (the queue's own name is its shared pool).`,
  slowLaneEnter: (queue: string, tenantId: string, failures: number) =>
    `tenant ${tenantId} entered the slow lane of queue "${queue}" after ${failures} failures; ` +
    `it gets a reduced share until its failures drop.`,
  slowLaneLeave: (queue: string, tenantId: string, failures: number) =>
    `tenant ${tenantId} left the slow lane of queue "${queue}" (${failures} recent failures).`,
  floorAboveCap: (queue: string, tenantId: string, floor: number, cap: number) =>
    `Invalid minConcurrency ${floor} for tenant "${tenantId}" on queue "${queue}": it must not be ` +
    `above the tenant's cap (${cap}). Raise the cap first (setConcurrency), or pass a floor <= ${cap}.`,
  floorsOverSlots: (queue: string, floors: string, sum: number, slots: number) =>
    `the guaranteed floors (minConcurrency) of queue "${queue}" add up to ${sum} slots (${floors}) ` +
    `but its live workers have ${slots}: when those tenants are busy at once not every floor can ` +
    `hold. Lower the floors, or add workers or concurrency to the queue.`,
  // docs
  rootModuleMissing: (queues: string[], module = 'TenantQueueModule') =>
    `${module}.registerQueue(${queues.map((q) => `{ name: '${q}' }`).join(', ')}) needs ` +
    `TenantQueueModule.forRoot({ connection }) (or forRootAsync) imported once in the application, ` +
    `usually in AppModule, and none is. Add it to AppModule's imports (in a test: ` +
    `TenantQueueTestingModule.forRoot()).`,
  queueSettingsDiffer: (queue: string, ours: string, theirs: string) =>
    `queue "${queue}" runs with other fairness settings in another process on this Redis ` +
    `(there: ${theirs}; here: ${ours}), so its jobs are admitted by two sets of rules, and ` +
    `those added where fairness is off skip the fair gate. Give every process the same ` +
    `registerQueue options (during a rolling deploy that changes them, this passes once the ` +
    `last process with the old settings stops).`,
  noWorkerForQueue: (queue: string, seconds: number) =>
    `queue "${queue}" has producers here but no worker for it is running, in this process or any ` +
    `other on this Redis (checked ${seconds} s after start), so its jobs wait. Add its ` +
    `@TenantProcessor('${queue}') class (under TenantBullMqModule, its @Processor('${queue}') class) ` +
    `to a module's providers, or start the process that runs it. A @Processor('${queue}') class ` +
    `consumes this queue only when TenantBullMqModule.registerQueue({ name: '${queue}' }) declares ` +
    `it (nestjs-tenant-queue/bullmq); beside BullModule.registerQueue it consumes BullMQ's own ` +
    `queue of that name instead, so move the declaration there.`,
  // producer
  invalidJobOption: (queue: string, name: string, option: string, why: string) =>
    `Job "${name}" on queue "${queue}": option "${option}" ${why}; nothing was enqueued. Fix or ` +
    `drop the option (see BullMQ's JobsOptions).`,
  jobNameNotString: (queue: string, name: unknown) =>
    `On queue "${queue}", the job name is not a string (it is ${kindOf(name)}); nothing was ` +
    `enqueued. Pass the name as a string, e.g. add('resize', data).`,
  addBulkNotJobs: (queue: string, what: string, value: unknown) =>
    `TenantQueue.addBulk on queue "${queue}": ${what} is ${kindOf(value)}, not ` +
    `${what === 'jobs' ? 'an array' : '{ name, data, opts? }'}; nothing was enqueued. Pass an ` +
    `array of { name, data, opts? }.`,
  tenantIdTooLong: (value: string, max: number) =>
    `Invalid tenant id ${JSON.stringify(truncate(value))}: it is ${value.length} characters long, ` +
    `above the limit of ${max} (the envelope's). Use a shorter id (a key or hash of the long one).`,
  jobIdIsBullKey: (queue: string, name: string, jobId: string) =>
    `Job id "${jobId}" of job "${name}" on queue "${queue}" is the name of one of BullMQ's own ` +
    `keys of the queue (BullMQ would write the job over it and stop the queue for every tenant); ` +
    `nothing was enqueued. Choose another id (e.g. prefix it with what it identifies: "order-${jobId}").`,
  jobIdInModuleNamespace: (queue: string, name: string, jobId: string) =>
    `Job id ${JSON.stringify(truncate(jobId))} of job "${name}" on queue "${queue}" is in the ` +
    `namespace of the ids the module makes (ids containing "~": schedules, crons, chunks; ids ` +
    `ending in ".r<n>": replays); nothing was enqueued. Choose an id without "~" that does not ` +
    `end in ".r" and digits.`,
  jobIdTooLong: (queue: string, name: string, jobId: string, max: number) =>
    `Job id ${JSON.stringify(truncate(jobId))} of job "${name}" on queue "${queue}" is ` +
    `${jobId.length} characters long, above the limit of ${max}; nothing was enqueued. Use a ` +
    `shorter id (a key or hash of the long one).`,
  jobIdTaken: (queue: string, jobId: string) =>
    `Job id ${JSON.stringify(truncate(jobId))} is already used on queue "${queue}" by another ` +
    `tenant's job; nothing was enqueued. Job ids are shared by all tenants of a queue: derive ` +
    `yours from something of this tenant (e.g. prefix it with the tenant id) or omit jobId.`,
  enqueueUnavailable: (queue: string, ms: number, written: false | 'unknown', why: string) =>
    `Enqueue on queue "${queue}" failed: ` +
    (why === 'no answer'
      ? `Redis did not answer within ${ms} ms (enqueueTimeoutMs). `
      : `Redis is unreachable (${why}). `) +
    (written === false
      ? `The job was NOT written and this call will never write it; retry once Redis is back.`
      : `The write was sent before the connection dropped, so Redis may have run it: retry with ` +
        `the same jobId so a repeat is harmless (a job added without a jobId of yours may be ` +
        `enqueued twice by a retry: give one where that matters).`),
  workerJobRemoved: (queue: string, jobId: string, command: string) =>
    `worker ${queue}: job ${jobId} was removed from Redis while it ran (Queue.obliterate with ` +
    `force, job.remove or a deleted key), so BullMQ could not record its end (${command}); its ` +
    `handler's outcome is lost with it. Nothing to do if the removal was meant; otherwise remove ` +
    `jobs only once they have finished (obliterate without force refuses while jobs are active).`,
  workerJobLockLost: (queue: string, jobId: string, lockMs: number) =>
    `worker ${queue}: job ${jobId} lost its lock: it was not renewed within the worker's ` +
    `lockDuration (${lockMs} ms), as Redis did not answer that long (paused, stalled or away) or ` +
    `this process's event loop was blocked. BullMQ does not record this run's outcome: its ` +
    `stalled check returns the job to the queue and it runs again (failed as stalled past ` +
    `maxStalledCount), possibly while this run is still going. Raise the processor's ` +
    `lockDuration above the longest stall you expect, run CPU-bound code with ` +
    `runInWorkerThread, and keep handlers idempotent.`,
  workerRedisNoPermission: (queue: string, why: string) =>
    `worker ${queue}: Redis refused this worker's command (${why}): the connection's ACL user ` +
    `lacks a permission BullMQ needs (it runs INFO on every connection, scripts, and commands on ` +
    `the keys under the module's prefix, {<prefix>:...}). The worker is paused, as every fetch ` +
    `would be refused again at once. Grant the command or key pattern to the user (e.g. ACL ` +
    `SETUSER <user> +info ~{<prefix>:*), then restart the process.`,
  workerRedisFull: (queue: string, why: string, unlogged: number, intervalMs: number) =>
    `worker ${queue}: ${why}: Redis is out of memory (its maxmemory is reached and its ` +
    `maxmemory-policy evicts nothing), so the worker can neither take nor finish jobs until it ` +
    `has room; it keeps trying. Free memory in Redis or raise maxmemory. Logged at most ` +
    `once every ${intervalMs / 1000} s` +
    (unlogged > 0 ? `; ${unlogged} more since the last line.` : '.'),
  enqueueRedisFull: (queue: string, written: false | 'unknown') =>
    `Enqueue on queue "${queue}" failed: Redis is out of memory (OOM: its maxmemory is reached and ` +
    `its maxmemory-policy evicts nothing) and refused the write. ` +
    (written === false
      ? `The job was NOT written. `
      : `Part of this call may have been written (a jobId's claim, another pool's jobs, the ` +
        `first jobs of an addBulk): retry with the same jobIds so a repeat is harmless. `) +
    `Free memory in Redis (let workers drain the queues, keep fewer finished jobs with ` +
    `removeOnComplete/removeOnFail), or raise maxmemory, then retry.`,
  enqueueRedisNoPermission: (queue: string, written: false | 'unknown', why: string) =>
    `Enqueue on queue "${queue}" failed: Redis refused the command (${why}): the connection's ` +
    `ACL user lacks a permission BullMQ needs (it runs INFO on every connection, scripts, and ` +
    `commands on the keys under the module's prefix, {<prefix>:...}). ` +
    (written === false
      ? `The job was NOT written. `
      : `Part of this call may have been written (a jobId's claim, another pool's jobs, the ` +
        `first jobs of an addBulk): retry with the same jobIds so a repeat is harmless. `) +
    `A retry is refused the same way until the permission is granted (e.g. ACL SETUSER <user> ` +
    `+info ~{<prefix>:*); the app's workers are paused and need a restart after it.`,
  redisDown: (client: string, why: string, wasUp = true) =>
    `Redis connection "${client}" ${wasUp ? 'lost' : 'not connected yet'} (${why}); retrying in the background (logged once per ` +
    `outage). Until it is back, enqueues fail with EnqueueUnavailableError and workers and ` +
    `schedules wait.`,
  redisBack: (client: string, ms: number, wasUp = true) =>
    `Redis connection "${client}" ${wasUp ? 'is back' : 'connected'} after ${ms} ms.`,
  cronDirectoryFailed: (name: string, why: string) =>
    `@TenantCron "${name}": its fan-out could not list the active tenants (${why}). The fan-out ` +
    `job is retried (exponential from 1 s, about 34 minutes in all); the jobs it added already are ` +
    `not added twice. Check the TenantDirectory; this is logged once until it answers again.`,
  cronDriverLost: (name: string, next: number | null) =>
    `@TenantCron "${name}": its driver was missing from Redis (restarted empty, flushed, or ` +
    `failed over to an empty replica); written again, next run ` +
    `${next === null ? 'none' : new Date(next).toISOString()}. Runs due while it was missing are not made up.`,
  unknownCronHandedBack: (name: string, ms: number) =>
    `@TenantCron "${name}" is not declared in this app, but its jobs reach this instance's ` +
    `workers (another version of the app declares it, as in a rolling deploy): they are handed ` +
    `back to BullMQ for an instance that declares it, for ${ms / 60_000} minutes after each was ` +
    `added. Logged once per cron.`,
  unknownCronGivenUp: (name: string, jobId: string, ms: number) =>
    `@TenantCron "${name}" is not declared in this app, and no instance that declares it took ` +
    `job ${jobId} within ${ms / 60_000} minutes of its add: given up. Run the version that ` +
    `declares it on an instance with workers, or, if the cron was dropped, ignore this line.`,
  cronDriversLater: () =>
    `Redis does not answer at boot: the @TenantCron schedules are stored, and run, once it does ` +
    `(set redisAtBoot: 'required' to fail the boot instead).`,
  redisUnavailableAtBoot: (why: string, ms: number) =>
    `Redis did not answer within ${ms} ms while the app bootstrapped (${why}), and redisAtBoot is ` +
    `'required'. Start Redis (or fix the connection option), or set redisAtBoot: 'optional' to ` +
    `boot anyway and let workers and crons start once Redis answers.`,
  shutdownTimedOut: (what: string, ms: number) =>
    `${what} did not finish within shutdownTimeoutMs (${ms} ms), Redis being away or a job ` +
    `running long; closed by force. Jobs still active go back to BullMQ as stalled and run ` +
    `again; raise shutdownTimeoutMs to let them finish.`,
  visibilityNotWrittenAtShutdown: (ms: number) =>
    `The last visibility counts (the lag, run time and result of the jobs since the last flush) ` +
    `were not written within shutdownTimeoutMs (${ms} ms), Redis being away or running jobs ` +
    `having used the bound up; the inspector, the dashboard and the gauges read from Redis miss ` +
    `them. Raise shutdownTimeoutMs to keep them.`,
  // security
  tenantSourceConflict: (claim: string, claimed: string, source: string, named: string) =>
    `Refused: the authenticated ${claim} names tenant "${claimed}" but the ${source} names ` +
    `"${named}". A request may not switch tenants through an unauthenticated source; drop the ` +
    `${source} or send the tenant your credentials belong to.`,
  tenantIdPatternTooLong: (pattern: RegExp, limit: number) =>
    `tenantIdPattern ${pattern} admits tenant ids longer than ${limit} characters, the most a job ` +
    `envelope carries: such ids are refused at enqueue. Bound the pattern (e.g. {1,${limit}}).`,
  tenantIdPatternStateful: (pattern: RegExp) =>
    `${pattern} has the g or y flag, so test() keeps a lastIndex and one id alternates between ` +
    `accepted and refused; drop the flag`,
  dashboardGuardRequired: (path: string) =>
    `is required: without one, /${path} serves every tenant's figures and dead letters and its ` +
    `pause/resume buttons to anyone. Pass register({ guard: YourAdminGuard }), or ` +
    `register({ allowUnauthenticated: true }) if the route is protected elsewhere`,
  dashboardUnguarded: (path: string) =>
    `the dashboard at /${path} is mounted without a guard (allowUnauthenticated: true): every ` +
    `tenant's data and the pause/resume buttons are open to anyone who can reach the route.`,
  deadLetterUnreadable: (queue: string, jobId: string, why: string) =>
    `dead-letter sweep of "${queue}" skipped failed job ${jobId}: its hash cannot be read (${why}). ` +
    `It stays in BullMQ's failed set; inspect or remove it there (e.g. queue.getJob / job.remove).`,
  // obs
  bullMqSeamMissing: () =>
    `TenantBullMqModule needs @nestjs/bullmq 11.0.5 or later (its ProcessorDecoratorService ` +
    `hook runs existing @Processor classes in their tenant's context). Upgrade @nestjs/bullmq, or ` +
    `move the processors to @TenantProcessor.`,
  redisBackendRequired: (queue: string, backend: string) =>
    `Queue "${queue}" would be kept by BullMQ's ${backend}, not Redis. This module needs Redis for ` +
    `the fair gate (turns, caps, admission), tenant schedules and @TenantCron, dead letters, ` +
    `@Idempotent run claims, job-id ownership, pools and the visibility counters (all Redis ` +
    `scripts next to BullMQ's keys). Keep the tenant queues on Redis: remove ` +
    `setDefaultBackendFactory(...) (or call it with no argument) and use withBackend(...) only ` +
    `for queues outside TenantQueueModule.`,
  labelForFailed: (tenantId: string, got: unknown) =>
    `metrics.labelFor gave no label for tenant "${tenantId}" (${
      got instanceof Error ? `it threw: ${got.message}` : `it returned ${String(got)}`
    }): its jobs are labelled "other". Make labelFor return a non-empty string for every ` +
    `tenant id (e.g. a default tier). Logged once per process.`,
  redisTooOldForFairness: (version: string, missing: string) =>
    `the Redis server (${version}) lacks ${missing}, which the fair queues' scripts use (Redis 6.2 ` +
    `or later; Debian 11's and Ubuntu 22.04's redis-server package is 6.0): their admissions, ` +
    `releases and ticks fail with "Unknown Redis command" or "wrong number of arguments", so jobs ` +
    `a rule holds never start. Run the fair queues on Redis 6.2 or later (redis.io's packages, ` +
    `the redis:7 image), or register those queues without fairness.`,
  twoBullmqCopies: (pkg: string, theirs: string, ours: string, where: string) =>
    `${pkg} resolves its own BullMQ ${theirs} (${where}), not the BullMQ ${ours} that the queues ` +
    `and workers use: the app has two BullMQ copies. Install the ${pkg} made for BullMQ ` +
    `${ours.split('.')[0]} (bullmq 6: bullmq-otel@^2, bullmq 5: bullmq-otel@^1.3.1), or make npm ` +
    `use one copy with "overrides": { "${pkg}": { "bullmq": "$bullmq" } } in the app's ` +
    `package.json (bullmq listed in its dependencies), then reinstall.`,
  bullMqQueueTwice: (queue: string, other: string, tenant: string) =>
    `@InjectQueue('${queue}') can give BullMQ's queue "${other}", not the tenant queue "${tenant}" that ` +
    `TenantBullMqModule.registerQueue({ name: '${queue}' }) declares: a BullModule.registerQueue ` +
    `of the same name provides that token too, so jobs would run without their tenant, or never. ` +
    `Remove BullModule.registerQueue({ name: '${queue}' }): TenantBullMqModule registers the ` +
    `queue, and @InjectQueue('${queue}') then gives the tenant queue.`,
  bullMqScopedProcessor: (className: string, queue: string) =>
    `@Processor class ${className} on tenant queue "${queue}" is request-scoped; @nestjs/bullmq ` +
    `resolves such processors per job outside this module's reach, so their jobs would run ` +
    `without the tenant checks. Make it a singleton, or move it to @TenantProcessor (which ` +
    `resolves request-scoped processors per job in the job's tenant context).`,
  bullMqPooledQueue: (queue: string) =>
    `TenantBullMqModule.registerQueue({ name: '${queue}' }) declares dedicated pools, but a ` +
    `@nestjs/bullmq worker consumes one BullMQ queue, so the pools' jobs would never run. ` +
    `Register it with TenantQueueModule.registerQueue and move its processor to ` +
    `@TenantProcessor('${queue}'), which starts one worker per pool.`,
  // stack
  jobClsSetupFailed: (queue: string, why: string | undefined) =>
    `the CLS setup of a worker event on queue "${queue}" failed (${why}); its ` +
    `@OnTenantWorkerEvent listener was not called. Fix the cls.setup option, the CLS plugin ` +
    `hook or the proxy provider that threw.`,
  invalidRunMarkerTable: (table: unknown) =>
    `Invalid run marker table ${JSON.stringify(truncate(table))}: it is written into SQL, so it ` +
    `must be a plain identifier, optionally schema-qualified (letters, digits, _; e.g. ` +
    `"tenant_job_runs" or "jobs.runs"). Nothing was written.`,
  // gate
  floorsBounded: (queue: string, below: number, defaultFloor: number) =>
    `the guaranteed floors (minConcurrency) of queue "${queue}" want more jobs admitted than its ` +
    `live workers have slots (${below} tenants with work are below their floor` +
    (defaultFloor > 0
      ? `; the queue's defaultMinConcurrency of ${defaultFloor} applies to every tenant that shows up`
      : '') +
    `): the gate admits floor jobs beyond its window only up to the workers' slots, so not every ` +
    `floor holds. Lower the floors (or the default floor), or add workers or concurrency to the queue.`,
  gateEntryUnreadable: (queue: string, jobId: string, why: string) =>
    `the fair gate of queue "${queue}" could not read its entry of job "${jobId}" (${why}); the job ` +
    `is marked failed with this reason and its slot is free, and the gate goes on. Something other ` +
    `than the gate wrote that entry: check what else writes the queue's keys, and enqueue the job again.`,
  admissionRefused: (queue: string, jobId: string, reason: string) =>
    `BullMQ refused job "${jobId}" of queue "${queue}" when the fair gate admitted it ` +
    `(${reason}); it is marked failed with this reason and its slot is free. Enqueue it again ` +
    `with options BullMQ accepts.`,
  stageWithoutPhase: (name: string | undefined, phases: readonly string[]) =>
    `The job stage ${name ?? '(anonymous)'} declares no phase: decorate its class with ` +
    `@TenantJobStage(phase, order), or pass the phase to useStage(stage, phase). Phases, outermost ` +
    `first: ${phases.join(', ')}.`,
  // scheduler: stored records
  unreadableSchedule: (id: string, reason: string) =>
    `Stored schedule "${id}" cannot be read: it ${reason}. It is left in Redis as it is and does ` +
    `not run here: write it again (TenantScheduler.upsert() for a tenant schedule; an app restart ` +
    `rewrites a @TenantCron) or delete it (TenantScheduler.remove()).`,
  scheduleQueueElsewhere: (id: string, queue: string) =>
    `schedule "${id}" enqueues on queue "${queue}", which this process does not register: its ` +
    `runs (and those of every schedule on that queue) are left to a process that does. Register ` +
    `the queue here (TenantQueueModule.registerQueue({ name: '${queue}' })), or set ` +
    `scheduler: { enabled: false } in processes that should not tick; an app that does not know ` +
    `the queue at all needs its own prefix.`,
  scheduleNotPlanned: (id: string, why: string) =>
    `Schedule "${id}" cannot be planned now (${why}). It stays due and is tried again at each ` +
    `tick; once it plans, runs that are late by then follow its "missed" policy. If it is a ` +
    `timezone: 'tenant' schedule, check that your TenantDirectory's getTenant() answers.`,
  // inspector
  invalidJobId: (jobId: unknown) =>
    `Invalid job id ${describeId(jobId)}: pass the id as a non-empty string, as TenantQueue.add ` +
    `returned it (EnqueuedJob.id).`,
  // dashboard
  dashboardPurgeQuery: (key: string) =>
    `The dead-letter purge takes one query parameter, jobId (the letter to remove; left out, it ` +
    `removes every letter of the tenant on the queue); "${truncate(key)}" is not it, so nothing ` +
    `was removed. Pass ?jobId=<id> for one letter, or no query for all.`,
  dashboardJobState: (state: unknown, allowed: readonly string[]) =>
    `Unknown job list "${String(truncate(state))}": ask for one of ${allowed.join(', ')}.`,
  dashboardRedisAway: (why: string, ms: number) =>
    `Redis is not answering the dashboard (${why.replace(/\.+$/, '')}); try again once it is ` +
    `back (routes answer 503 after enqueueTimeoutMs, ${ms} ms).`,
  dashboardActionGoesOn: (takesBack: boolean) =>
    takesBack
      ? `in force; the tenant's jobs queued by turn are still being taken back into the gate ` +
        `(1,000 a call), and one not yet taken back may still start. The page shows them held as ` +
        `they move.`
      : `in force; the gate is still at work on the tenant's jobs.`,
  dashboardNotFair: (queue: string, action: string) =>
    `Cannot ${action} one tenant on queue "${queue}": it has no fair gate, so its jobs wait in ` +
    `BullMQ's shared list. Register it with fairness on (registerQueue({ name: '${queue}', ` +
    `fairness: {} })) to pause, resume or tune tenants one by one.`,
  dashboardNoSettings: () =>
    `The TenantQueueControls provider has no configure(): editing weight, cap and rate limit ` +
    `is off. Use the fair gate's controls (the default) or implement configure().`,
  dashboardSettingsBody: (fields: string[]) =>
    `Send a JSON object with at least one of ${fields.join(', ')} (a number, false for no rate ` +
    `limit, or null for the default), e.g. {"weight": 3}. Nothing was changed.`,
  dashboardNoSuchJob: (queue: string, tenantId: string, jobId: string) =>
    `Queue "${queue}" has no job "${truncate(jobId)}" of tenant "${truncate(tenantId)}": check the ` +
    `id and the tenant (a job is shown and acted on only under its own tenant's routes).`,
  dashboardRetryNotFailed: (queue: string, jobId: string, state: string) =>
    `Job "${truncate(jobId)}" of queue "${queue}" is ${state === 'unknown' ? 'not in BullMQ' : state}, ` +
    `not failed: only failed jobs can be retried (a dead letter is replayed from its own list).`,
  dashboardRetryTenantNotActive: (queue: string, jobId: string, tenantId: string, reason: string) =>
    `Job "${truncate(jobId)}" of queue "${queue}" was not retried: tenant "${tenantId}" is not ` +
    `active, so its worker would cancel the job (${reason}) without running it. Reactivate the ` +
    `tenant in your TenantDirectory first, then retry. Nothing was retried.`,
  dashboardRetryCancelled: (queue: string, jobId: string, reason: string) =>
    `Job "${truncate(jobId)}" of queue "${queue}" was cancelled (${reason}), not dead-lettered: on ` +
    `a fair queue a retry is a replay of the job's dead letter (so it goes through the gate), and ` +
    `a cancelled job has none. Remove the cause of the cancellation, then enqueue the work again ` +
    `(TenantQueue.addForTenant). Nothing was enqueued.`,
  unknownTier: (tier: unknown, tiers: string[]) =>
    `Tier ${JSON.stringify(tier)} is not defined: assign one of the tiers the "tiers" option ` +
    `defines (${tiers.length ? tiers.join(', ') : 'none is defined'}), or null to go back to the ` +
    `tenant's directory record.`,
  dashboardTierBody: (tiers: string[]) =>
    `The tier change must be JSON { "tier": <name> } with one of ${tiers.join(', ') || '(no tiers defined)'}, ` +
    `or { "tier": null } to go back to the tenant's directory record.`,
};

/** An id a caller passed, quoted and cut short for a message. */
function describeId(value: unknown): string {
  return JSON.stringify(truncate(value)) ?? String(value);
}

function truncate(value: unknown): unknown {
  return typeof value === 'string' && value.length > 80 ? `${value.slice(0, 80)}...` : value;
}

/** What a value a caller passed is, for a message: "undefined", "an array", "a number"... */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
