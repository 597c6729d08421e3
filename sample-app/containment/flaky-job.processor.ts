import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Injectable, Logger } from '@nestjs/common';
import {
  Idempotent,
  NonRetryableError,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantWorkerHost,
  runIdentity,
} from '../../lib';

export interface FlakyJob {
  /** Attempts that fail before one succeeds (0: succeed at once). */
  failures?: number;
  /** Never finish: the 2 s timeout fails each attempt with [TIMEOUT]. */
  hang?: boolean;
  /** Fail without retry. */
  reject?: boolean;
  /** An input file to read first (a missing one fails for good, naming the server's path). */
  input?: string;
}

/** Tenants whose flaky jobs were "fixed" (`PUT /containment/fixed`): they succeed from then on. */
@Injectable()
export class FlakyFixes {
  private readonly fixed = new Set<string>();

  fix(tenantId: string): void {
    this.fixed.add(tenantId);
  }

  isFixed(tenantId: string | undefined): boolean {
    return tenantId !== undefined && this.fixed.has(tenantId);
  }
}

/**
 * A job that fails on purpose: retried with backoff, timed out when it hangs, dead-lettered when
 * it gives up. `@Idempotent` makes a replayed or redelivered run that already completed a no-op.
 */
@Idempotent({ ttl: 3_600_000 })
@TenantProcessor('containment-demo', { concurrency: 4, timeoutMs: 2_000 })
export class FlakyJobProcessor extends TenantWorkerHost {
  private readonly logger = new Logger('FlakyJobProcessor');

  constructor(
    private readonly tenant: TenantContext,
    private readonly fixes: FlakyFixes,
  ) {
    super();
  }

  async process(job: TenantJob<FlakyJob>, _token?: string, signal?: AbortSignal) {
    const attempt = job.attemptsMade + 1;
    this.logger.log(`[tenant ${this.tenant.tenantId}] run ${job.runId}, attempt ${attempt}`);
    if (job.data.reject) throw new NonRetryableError('rejected on purpose: nothing to retry');
    if (job.data.input !== undefined) {
      const path = join(__dirname, 'inputs', basename(job.data.input));
      await readFile(path).catch((error: Error) => {
        throw new NonRetryableError(`cannot read the input: ${error.message}`);
      });
    }
    if (job.data.hang) {
      // Honours the signal: stops at the deadline instead of running on in the background.
      await new Promise((_, reject) =>
        signal?.addEventListener('abort', () => reject(signal.reason)),
      );
    }
    const fixed = this.fixes.isFixed(this.tenant.tenantId);
    if (!fixed && attempt <= (job.data.failures ?? 0))
      throw new Error(`flaky failure on attempt ${attempt}`);
    // Key your own writes by (tenant, run) so a repeated run cannot double them.
    return { done: runIdentity(job).key };
  }
}
