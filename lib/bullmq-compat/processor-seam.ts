import { ProcessorDecoratorService } from '@nestjs/bullmq';
import { WaitingError, Worker } from 'bullmq';
import type { Job, Processor } from 'bullmq';
import { wakeWorkers } from '../core/bullmq';

type Run = (job: Job, token?: string, signal?: AbortSignal) => Promise<unknown>;
/** Builds what an adopted worker runs, around the processor `@nestjs/bullmq` decorated. */
export type AdoptedRun = (inner: Processor) => Run;

/**
 * The seam in `@nestjs/bullmq` 11.0.5+: `BullExplorer` passes every `@Processor`'s bound
 * `process` through `ProcessorDecoratorService.decorate` once, at `onModuleInit`, and hands the
 * result to `new Worker(...)`, which calls it as `worker.processFn(job, token)`, so `this` is the
 * worker. The provider lives inside `BullModule`'s own module and cannot be replaced through DI,
 * so its prototype is patched once per process (what APM agents do). What a job runs is looked up
 * by its worker: a worker adopted by a `TenantBullMqModule` runs the tenant runner; any other
 * calls straight through.
 */
const adopted = new WeakMap<Worker, AdoptedRun>();
const refused = new WeakSet<Worker>();
/** Qualified names (`<prefix>:<queue>`) an app has claimed and will bind at bootstrap. */
const claimed = new Map<string, number>();
let bound = deferred();

const PATCHED = Symbol.for('nestjs-tenant-queue:processor-seam');

/** Installs the patch (idempotent); false when this `@nestjs/bullmq` has no such seam. */
export function installProcessorSeam(): boolean {
  const prototype = (ProcessorDecoratorService as unknown as { prototype?: Decorator })?.prototype;
  if (typeof prototype?.decorate !== 'function') return false;
  if (prototype[PATCHED]) return true;
  const original = prototype.decorate;
  prototype.decorate = function decorate(this: Decorator, processor: Processor) {
    return seamProcessor(original.call(this, processor));
  };
  prototype[PATCHED] = true;
  return true;
}

interface Decorator {
  decorate(processor: Processor): Processor;
  [PATCHED]?: true;
}

/**
 * One per decorated processor (per worker), made at bootstrap. BullMQ reads its arity: three
 * parameters cost an AbortController per job, so only a `process` that declares the signal gets
 * it (and `worker.cancelJob`), as without the seam.
 */
function seamProcessor(inner: Processor): Processor {
  let run: Run | undefined;
  function tenantSeam(this: Worker, job: Job, token?: string, signal?: AbortSignal) {
    if (run) return run(job, token, signal);
    return resolve(this, inner).then((found) => (run = found)(job, token, signal));
  }
  if (inner.length >= 3) return tenantSeam;
  return function tenantSeamNoSignal(this: Worker, job: Job, token?: string) {
    return tenantSeam.call(this, job, token);
  };
}

async function resolve(worker: Worker, inner: Processor): Promise<Run> {
  // A job can arrive before the app that claimed this queue reaches its bootstrap: wait for it.
  while (!adopted.has(worker) && !refused.has(worker) && claimed.has(worker?.qualifiedName)) {
    await bound.promise;
  }
  if (refused.has(worker)) return (job, token) => putBack(worker, job, token);
  const build = adopted.get(worker);
  return build ? build(inner) : inner;
}

/**
 * What a refused worker's jobs run: BullMQ's move back to `wait` as the job was (no attempt
 * spent), for a worker of an app that did boot, with the wake a job with a priority needs there
 * (`prioritized`, every job of a fair queue by turn: see `wakeWorkers`), then BullMQ's
 * WaitingError, on which the worker leaves the job where it is (refused, it is closing).
 */
async function putBack(worker: Worker, job: Job, token?: string): Promise<never> {
  await job.moveToWait(token);
  if (job.priority > 0) await wakeWorkers(worker).catch(() => undefined);
  throw new WaitingError();
}

/**
 * @internal Closes the worker of an app that failed to boot (or shuts down before its
 * bootstrap): the jobs it took wait for no adoption but go back to `wait`, so none runs without
 * its tenant. Closed here, not left to `@nestjs/bullmq`: Nest 11 runs no shutdown hook after a
 * failed bootstrap.
 */
export function refuseWorker(worker: Worker): void {
  if (adopted.has(worker) || refused.has(worker)) return;
  refused.add(worker);
  notifyBound();
  worker.close().catch(() => undefined);
}

/** @internal Called while the app's providers are built, before any worker starts. */
export function claimQueues(qualifiedNames: string[]): () => void {
  for (const name of qualifiedNames) claimed.set(name, (claimed.get(name) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    for (const name of qualifiedNames) {
      const left = (claimed.get(name) ?? 1) - 1;
      if (left > 0) claimed.set(name, left);
      else claimed.delete(name);
    }
    notifyBound();
  };
}

/** @internal Routes the jobs of `worker` through `run`. */
export function adoptWorker(worker: Worker, build: AdoptedRun): void {
  adopted.set(worker, build);
}

/** @internal Wakes jobs waiting for their app's bootstrap. */
export function notifyBound(): void {
  const current = bound;
  bound = deferred();
  current.resolve();
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}
