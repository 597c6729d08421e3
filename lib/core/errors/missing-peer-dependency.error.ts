import { TenantQueueError } from './tenant-queue.error';

/**
 * An entry point of the module (`nestjs-tenant-queue/health`, `/bullmq`, `/bull-board`) was
 * imported, and the optional peer dependency it is built on is not installed. The message gives
 * the `npm install` command; `entryPoint` and `peer` name the two.
 * @publicApi
 */
export class MissingPeerDependencyError extends TenantQueueError {
  constructor(
    readonly entryPoint: string,
    readonly peer: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
