import type { TenantJobOptions } from '../core/queues/job-dispatcher.interface';
import { InvalidPayloadError } from '../core/errors';
import { EnqueuedJob } from '../core/types/tenant-job.interface';
import { TenantQueue } from '../core/queues/tenant-queue';
import { Messages } from '../tenant-queue.messages';
import { moduleJobOptions } from '../core/queues/job-id.check';

/**
 * One slice of a big job, handed to `AddChunkedOptions.data`.
 * @publicApi
 */
export interface ChunkInfo<R> {
  /** 0-based chunk number. */
  index: number;
  /** Number of chunks in total. */
  chunks: number;
  /** Position of the chunk's first item in the whole. */
  offset: number;
  /** The chunk's items (empty when the source is `{ total }`). */
  items: R[];
  /** How many items the chunk covers. */
  size: number;
}

/**
 * Options of `addChunked(...)`.
 * @publicApi
 */
export interface AddChunkedOptions<T, R> {
  /**
   * Items per job.
   * @default 500
   */
  chunkSize?: number;
  /**
   * Stable id of the whole (e.g. the import's id). Chunk `i` gets job id `<jobIdPrefix>~c<i>`, so
   * splitting the same work twice enqueues nothing new. Without it every chunk gets a new UUID.
   */
  jobIdPrefix?: string;
  /**
   * Payload of one chunk's job.
   * @default ({ index, chunks, offset, size, items }) => ({ index, chunks, offset, size, items })
   */
  data?: (chunk: ChunkInfo<R>) => T;
  /** Options for every chunk's job (BullMQ's, and `lane` or `fairKey` on a fair queue). */
  opts?: Omit<TenantJobOptions, 'jobId'>;
}

const ENQUEUE_BATCH = 1000;
const JOB_ID_PREFIX = /^[A-Za-z0-9_.-]{1,200}$/;

/**
 * Splits one huge job (a 200,000-row import) into many small jobs of the current tenant, so no
 * single job holds a worker for long and, on a fair queue, other tenants' jobs run in between.
 * `source` is the items themselves, or `{ total }` when each chunk job loads its own range.
 * Runs in the current tenant context; for system work wrap it in `TenantContext.run(tenantId, ...)`.
 * @publicApi
 */
export async function addChunked<T extends object, R = unknown>(
  queue: TenantQueue<T>,
  name: string,
  source: readonly R[] | { total: number },
  options: AddChunkedOptions<T, R> = {},
): Promise<EnqueuedJob[]> {
  const size = options.chunkSize ?? 500;
  const total = Array.isArray(source) ? source.length : (source as { total: number }).total;
  if (!Number.isInteger(size) || size < 1 || !Number.isInteger(total) || total < 0) {
    throw new InvalidPayloadError(
      Messages.invalidPayload(
        queue.name,
        name,
        'chunking needs an integer chunkSize >= 1 and total >= 0',
      ),
    );
  }
  if (options.jobIdPrefix !== undefined && !JOB_ID_PREFIX.test(options.jobIdPrefix)) {
    throw new InvalidPayloadError(
      Messages.invalidPayload(
        queue.name,
        name,
        'has a jobIdPrefix that is not 1-200 of [A-Za-z0-9_.-]',
      ),
    );
  }
  const chunks = Math.ceil(total / size);
  const build = options.data ?? ((chunk: ChunkInfo<R>) => ({ ...chunk }) as unknown as T);
  const enqueued: EnqueuedJob[] = [];
  for (let first = 0; first < chunks; first += ENQUEUE_BATCH) {
    const batch = [];
    for (let index = first; index < Math.min(chunks, first + ENQUEUE_BATCH); index++) {
      const offset = index * size;
      const items = Array.isArray(source) ? source.slice(offset, offset + size) : [];
      const chunk: ChunkInfo<R> = {
        index,
        chunks,
        offset,
        items,
        size: Math.min(size, total - offset),
      };
      const jobId = options.jobIdPrefix ? `${options.jobIdPrefix}~c${index}` : undefined;
      batch.push({ name, data: build(chunk), opts: moduleJobOptions({ ...options.opts, jobId }) });
    }
    enqueued.push(...(await queue.addBulk(batch)));
  }
  return enqueued;
}
