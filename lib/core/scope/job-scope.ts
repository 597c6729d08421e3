import { Injectable, Logger } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import { jobLogRef, tenantLogFields } from '../context/tenant-log-fields';
import { TenantQueueLogger } from '../logging/tenant-queue-logger';
import { TENANT_STATE, TenantState } from '../context/tenant-state';
import { JobScopeUnavailableError } from '../errors';
import { Messages } from '../../tenant-queue.messages';
import type { TenantJob } from '../types/tenant-job.interface';

type Disposer = () => unknown;

/** What a job attempt (the runner's `JobRun`) gives its scope: its job and its disposers. */
export interface ScopedAttempt {
  readonly job: TenantJob;
  /** @internal `JobScope`'s disposers: none yet (undefined), some, or closed (null). */
  disposers?: (() => unknown)[] | null;
}

/**
 * Temporary resources of the running job, released when its attempt settles: after the handler
 * returns, throws or times out, in reverse order of registration, before BullMQ records the
 * outcome. A disposer that throws is logged with the job's tenant and id; it never replaces the
 * job's own result or error. A singleton: inject it anywhere, it finds the running job through
 * the async context. Jobs that never use it pay nothing.
 * @publicApi
 */
@Injectable()
export class JobScope {
  private readonly logger = new TenantQueueLogger('TenantQueue');

  constructor(private readonly cls: ClsService) {}

  /** True inside a job's `process()` and the code it awaits. */
  get active(): boolean {
    return this.current() !== undefined;
  }

  /** Runs `dispose` when the attempt settles (last registered, first run). */
  defer(dispose: () => unknown): void {
    const context = this.require('defer');
    const disposers = context.disposers;
    if (disposers === null) {
      // The attempt already ended (a timed-out handler still running): release at once.
      void runDisposer(dispose, context, this.logger);
    } else if (disposers) disposers.push(dispose);
    else context.disposers = [dispose];
  }

  /**
   * Registers `resource` and returns it: released with its `[Symbol.asyncDispose]()` or
   * `[Symbol.dispose]()`, or with `dispose(resource)` when given. `null` and `undefined` pass
   * through, as with `using`.
   */
  use<T extends AsyncDisposable | Disposable | null | undefined>(resource: T): T;
  use<T>(resource: T, dispose: (resource: T) => unknown): T;
  use<T>(resource: T, dispose?: (resource: T) => unknown): T {
    this.require('use');
    if (dispose) {
      this.defer(() => dispose(resource));
      return resource;
    }
    if (resource === null || resource === undefined) return resource;
    const target = resource as Partial<AsyncDisposable & Disposable>;
    const method = target[Symbol.asyncDispose] ?? target[Symbol.dispose];
    if (typeof method !== 'function') {
      throw new TypeError(Messages.notDisposable(describe(resource)));
    }
    this.defer(() => method.call(resource));
    return resource;
  }

  /** The running attempt: the tenant state of a job's context points to it. */
  private current(): ScopedAttempt | undefined {
    if (!this.cls.isActive()) return undefined;
    return this.cls.get<TenantState | undefined>(TENANT_STATE)?.attempt as
      ScopedAttempt | undefined;
  }

  private require(method: string): ScopedAttempt {
    const context = this.current();
    if (!context) throw new JobScopeUnavailableError(Messages.jobScopeOutsideJob(method));
    return context;
  }
}

/**
 * @internal Ends the attempt's scope (a later `defer` releases at once) and returns what it
 * registered, if anything; synchronous, so an attempt that used no scope pays no async frame.
 */
export function endJobScope(context: ScopedAttempt): Disposer[] | undefined {
  const disposers = context.disposers;
  context.disposers = null;
  return disposers ?? undefined;
}

/** @internal Runs the disposers of an ended scope, last registered first; never throws. */
export async function runDisposers(
  disposers: Disposer[],
  context: ScopedAttempt,
  logger: Logger,
): Promise<void> {
  for (let i = disposers.length - 1; i >= 0; i--) {
    await runDisposer(disposers[i], context, logger);
  }
}

async function runDisposer(dispose: Disposer, context: ScopedAttempt, logger: Logger) {
  try {
    await dispose();
  } catch (error) {
    const { job } = context;
    const why = error instanceof Error ? error.message : String(error);
    logger.error(
      `${tenantLogFields(jobLogRef(job))} ${Messages.jobScopeDisposerFailed(job.queueName, job.name, why)}`,
    );
  }
}

function describe(value: unknown): string {
  if (typeof value !== 'object') return `a ${typeof value}`;
  const name = (value as object).constructor?.name;
  return name ? `an instance of ${name}` : 'an object';
}
