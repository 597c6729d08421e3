import type { Queue } from 'bullmq';
import { EnqueueUnavailableError } from '../errors';
import { Messages } from '../../tenant-queue.messages';
import type { RedisClient } from '../redis/tenant-queue.redis';
import {
  isOutOfMemoryReply,
  isPermissionReply,
  isRedisConnectionError,
} from '../redis/connection-errors';

const TIMEOUT = Symbol('timeout');

/** Resolves to `value`, or to `TIMEOUT` at `deadline`. */
function until<T>(value: Promise<T>, deadline: number): Promise<T | typeof TIMEOUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMEOUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMEOUT), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([value, timeout]).finally(() => clearTimeout(timer));
}

/** One wait for `ready` per client and connection attempt, shared by every waiting call. */
const readyOf = new WeakMap<RedisClient, Promise<void>>();

/** Resolves once the client is connected, or to `TIMEOUT` at `deadline`. */
function connected(client: RedisClient, deadline: number): Promise<unknown> {
  if (client.status === 'ready') return Promise.resolve();
  if (client.status === 'wait') client.connect().catch(() => undefined);
  let ready = readyOf.get(client);
  if (!ready) {
    ready = new Promise<void>((resolve) => client.once('ready', resolve)).finally(() =>
      readyOf.delete(client),
    );
    readyOf.set(client, ready);
  }
  return until(ready, deadline);
}

/**
 * @internal The bound of every enqueue: Redis must take the call within `ms`. Nothing is handed
 * to the connection before it is ready, no write starts after the deadline, and the connection
 * keeps no offline queue: a call that failed is never written later.
 */
export class EnqueueBound {
  constructor(
    readonly ms: number,
    /** The producer's connection; undefined under the testing module (no Redis). */
    private readonly client: () => RedisClient | undefined,
  ) {}

  /**
   * Runs `write` once the producer's connection is ready, within `ms` in all. `write` calls
   * `call.ready(queues)` before its first write and `call.send()` right before each; connection
   * failures and the deadline become `EnqueueUnavailableError`.
   */
  async run<T>(queueName: string, write: (call: EnqueueCall) => Promise<T>): Promise<T> {
    const client = this.client();
    const call = new EnqueueCall(this, queueName, Date.now() + this.ms, client);
    if (!client) return write(call);
    if ((await connected(client, call.deadline)) === TIMEOUT || client.status !== 'ready') {
      throw call.unavailable(`connection ${client.status}`);
    }
    let result: T | typeof TIMEOUT;
    try {
      result = await until(write(call), call.deadline);
    } catch (error) {
      if (isRedisConnectionError(error)) throw call.unavailable((error as Error).message, error);
      if (isOutOfMemoryReply(error)) throw call.full(error);
      if (isPermissionReply(error)) throw call.refused(error);
      throw error;
    }
    if (result === TIMEOUT) {
      call.expired = true;
      throw call.unavailable('no answer');
    }
    return result;
  }
}

/** @internal One enqueue call under its bound. */
export class EnqueueCall {
  expired = false;
  /** Writes handed to the connection so far. */
  sent = 0;
  /** Whether a write carried several jobs. */
  batched = false;

  constructor(
    private readonly bound: EnqueueBound,
    private readonly queueName: string,
    readonly deadline: number,
    private readonly client: RedisClient | undefined,
  ) {}

  /** Waits (within the bound) for BullMQ's clients of the queues about to be written. */
  async ready(queues: Queue[]): Promise<void> {
    if (!this.client) return;
    const clients = Promise.all(queues.map((queue) => queue.waitUntilReady()));
    if ((await until(clients, this.deadline)) === TIMEOUT) {
      this.expired = true;
      throw this.unavailable('BullMQ connection not ready');
    }
  }

  /** Throws once the call has failed: a step that resumes after the deadline goes no further. */
  live(): void {
    if (this.expired) throw this.unavailable('no answer');
  }

  /** Called right before a write (of `jobs` jobs): none starts once the call has failed. */
  send(jobs = 1): void {
    if (this.expired) throw this.unavailable('no answer');
    this.sent++;
    if (jobs > 1) this.batched = true;
  }

  /**
   * Redis refused a write for want of memory. The refused command wrote nothing; but a call that
   * wrote before it (a caller-chosen id's claim), or wrote several jobs (BullMQ's `addBulk` is
   * not atomic on every client: under ioredis 6 the first job of two was stored), may have left
   * something.
   */
  full(cause: unknown): EnqueueUnavailableError {
    const written = this.sent > 1 || this.batched ? 'unknown' : false;
    return new EnqueueUnavailableError(
      this.queueName,
      written,
      Messages.enqueueRedisFull(this.queueName, written),
      { cause },
    );
  }

  /**
   * Redis refused a command for want of a permission (`NOPERM`: the connection's ACL user), the
   * same on every retry. As for `full`, the refused command wrote nothing; an earlier write of the
   * call may have.
   */
  refused(cause: unknown): EnqueueUnavailableError {
    const written = this.sent > 1 || this.batched ? 'unknown' : false;
    return new EnqueueUnavailableError(
      this.queueName,
      written,
      Messages.enqueueRedisNoPermission(this.queueName, written, (cause as Error).message),
      { cause },
    );
  }

  unavailable(why: string, cause?: unknown): EnqueueUnavailableError {
    // ioredis refuses a command it cannot write at once (no offline queue): when that was the
    // call's first write, nothing reached Redis.
    const refusedFirst = this.sent === 1 && isRefusedUnsent(cause);
    const written = this.sent > 0 && !refusedFirst ? 'unknown' : false;
    return new EnqueueUnavailableError(
      this.queueName,
      written,
      Messages.enqueueUnavailable(this.queueName, this.bound.ms, written, why),
      cause === undefined ? undefined : { cause },
    );
  }
}

/**
 * ioredis's refusal of a command it never wrote (offline queue off, stream not writeable, or a
 * `Cluster` not ready).
 */
function isRefusedUnsent(error: unknown): boolean {
  return (
    error instanceof Error &&
    /^(Stream isn't writeable|Cluster isn't ready) and enableOfflineQueue options is false/.test(
      error.message,
    )
  );
}
