import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { tenantLogFields } from '../context/tenant-log-fields';
import { TenantQueueLogger } from '../logging/tenant-queue-logger';
import { RedisUnavailableAtBootError } from '../errors/redis-unavailable-at-boot.error';
import IORedis, { Cluster, Redis, RedisOptions } from 'ioredis';
import { Messages } from '../../tenant-queue.messages';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../options/core.options';
import { assertConnection } from './connection-check';

export type RedisClient = Redis | Cluster;

/**
 * What the producer's connection never does once it has connected: hold a command while Redis
 * is away (no offline queue), resend one after a reconnect, or retry one. A write it could not
 * send fails at once, and one in flight when the connection drops fails with it, so an enqueue
 * that reported a failure can never be written later. Before the first connection, commands of
 * the module's upkeep wait in the offline queue (enqueues never do: they wait for `ready`).
 */
const NO_LATE_WRITES = {
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
} as const;

function offlineQueueOffOnceReady(client: RedisClient): RedisClient {
  client.once('ready', () => {
    client.options.enableOfflineQueue = false;
  });
  return client;
}

/**
 * Resolves true once `work` settles, false when `ms` pass first (the work goes on unawaited).
 * For shutdown steps that must end within `shutdownTimeoutMs` whatever Redis does.
 */
export function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]).finally(() => clearTimeout(timer));
}

/** Reconnects within 2 s of Redis coming back (ioredis' default waits up to 20 s under BullMQ). */
export const reconnectSoon = (attempt: number) => Math.min(attempt * 100, 2000);

/**
 * Logs a connection's errors once per outage and once when it is back, instead of one line (or
 * ioredis' "Unhandled error event") per reconnect attempt.
 */
export class OutageLog {
  private downSince: number | undefined;
  /** Whether the connection was ready once: an outage "lost" it, else it is "not connected yet". */
  private wasUp = false;

  constructor(
    private readonly name: string,
    private readonly logger: Logger,
  ) {}

  error(error: unknown): void {
    if (this.downSince !== undefined) return;
    this.downSince = Date.now();
    this.logger.warn(
      `${tenantLogFields()} ${Messages.redisDown(this.name, (error as Error)?.message ?? String(error), this.wasUp)}`,
    );
  }

  ready(): void {
    const wasUp = this.wasUp;
    this.wasUp = true;
    if (this.downSince === undefined) return;
    this.logger.log(
      `${tenantLogFields()} ${Messages.redisBack(this.name, Date.now() - this.downSince, wasUp)}`,
    );
    this.downSince = undefined;
  }

  watch(client: { on(event: string, listener: (arg?: any) => void): unknown }): void {
    client.on('error', (error) => this.error(error));
    client.on('ready', () => this.ready());
  }
}

/**
 * The module's own Redis clients, each opened on first use and closed on shutdown: `client` for
 * its scripts (schedules, dead letters, upkeep), `producer` for the enqueue path (BullMQ queues,
 * the fair gate, the job id ledgers). A client instance passed as `connection` is duplicated,
 * never closed by the module.
 */
@Injectable()
export class TenantQueueRedis implements OnModuleInit, OnApplicationShutdown {
  private current: RedisClient | undefined;
  private producerClient: RedisClient | undefined;
  private closed = false;
  private shutdownDeadline: number | undefined;
  private readonly logger = new TenantQueueLogger('TenantQueue');

  constructor(
    @Inject(TENANT_QUEUE_OPTIONS)
    private readonly options: ResolvedTenantQueueOptions,
  ) {}

  /**
   * With `redisAtBoot: 'required'`, fails the boot with `RedisUnavailableAtBootError` when Redis
   * does not answer within `enqueueTimeoutMs`, through a probe connection closed either way (Nest
   * runs no shutdown hook after a failed init, so nothing may be left reconnecting: the module's
   * clients are closed too).
   */
  async onModuleInit(): Promise<void> {
    if (this.options.redisAtBoot !== 'required') return;
    const probe = this.open({
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    // ioredis rejects connect() with "Connection is closed."; the reason is the error before it.
    let cause: Error | undefined;
    probe.on('error', (error: Error) => (cause = error));
    const ms = this.options.enqueueTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        probe.connect().then(() => probe.ping()),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('no answer')), ms);
        }),
      ]);
    } catch (error) {
      // The producer's connection, open since the queues were built, reconnects for good.
      await this.onApplicationShutdown();
      throw new RedisUnavailableAtBootError(
        Messages.redisUnavailableAtBoot((cause ?? (error as Error))?.message ?? String(error), ms),
      );
    } finally {
      clearTimeout(timer);
      probe.disconnect();
    }
  }

  /** @internal Whether the clients are closed (shutdown, or a boot the module refused). */
  get isClosed(): boolean {
    return this.closed;
  }

  /** The client; throws after shutdown, so late callers never open a connection nobody closes. */
  get client(): RedisClient {
    this.assertOpen();
    this.current ??= this.watched('scripts', this.open());
    return this.current;
  }

  /** The producer's client: no offline queue, no resend, no retry (see `NO_LATE_WRITES`). */
  get producer(): RedisClient {
    this.assertOpen();
    this.producerClient ??= this.watched(
      'producer',
      offlineQueueOffOnceReady(this.open(NO_LATE_WRITES, reconnectSoon)),
    );
    return this.producerClient;
  }

  /**
   * @internal Waits for boot work on the scripts' client: true once it settles, false as soon as
   * the client reports an error (Redis away) or `enqueueTimeoutMs` passes; the work goes on.
   */
  async settlesAtBoot(work: Promise<unknown>): Promise<boolean> {
    const client = this.client;
    let failed: (() => void) | undefined;
    const down = new Promise<boolean>((resolve) => {
      failed = () => resolve(false);
      client.once('error', failed);
    });
    try {
      return await Promise.race([settlesWithin(work, this.options.enqueueTimeoutMs), down]);
    } finally {
      client.off('error', failed!);
    }
  }

  /** @internal The shutdown bound as configured (`shutdownTimeoutMs`), for the steps it cuts. */
  get shutdownTimeoutMs(): number {
    return this.options.shutdownTimeoutMs;
  }

  /**
   * @internal Milliseconds left of the shutdown bound (`shutdownTimeoutMs`), which starts at the
   * first call: each shutdown step waits at most this long, so together they end within it.
   */
  shutdownMsLeft(): number {
    this.shutdownDeadline ??= Date.now() + this.options.shutdownTimeoutMs;
    return Math.max(0, this.shutdownDeadline - Date.now());
  }

  /** @internal Logs the errors of a client the module made for itself, once per outage. */
  outageLog(name: string): OutageLog {
    return new OutageLog(name, this.logger);
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('TenantQueueRedis is closed (the application has shut down).');
  }

  private watched(name: string, client: RedisClient): RedisClient {
    this.outageLog(name).watch(client);
    return client;
  }

  /** Without `overrides`: a duplicate of a passed instance as it is (the scripts' client). */
  private open(
    overrides?: Partial<RedisOptions>,
    retryStrategy?: (attempt: number) => number,
  ): RedisClient {
    const connection = this.options.connection as unknown;
    assertConnection(connection, false);
    if (connection instanceof Cluster) {
      if (!overrides) return connection.duplicate();
      // lazyConnect and the offline queue are the Cluster's own options: in redisOptions only,
      // the boot probe's duplicate connected at once and its connect() was refused.
      const { lazyConnect, enableOfflineQueue } = overrides;
      return connection.duplicate(undefined, {
        ...(lazyConnect === undefined ? {} : { lazyConnect }),
        ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
        redisOptions: { ...connection.options.redisOptions, ...overrides },
      });
    }
    if (connection instanceof Redis) return connection.duplicate(overrides);
    // BullMQ's ConnectionOptions may carry a `url` (as BullMQ reads it); ioredis takes it apart.
    const { url, ...rest } = connection as RedisOptions & { url?: string };
    const options: RedisOptions = {
      ...(retryStrategy ? { retryStrategy } : {}),
      ...rest,
      ...(overrides ?? { maxRetriesPerRequest: null }),
    };
    return url ? new IORedis(url, options) : new IORedis(options);
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    const clients = [this.current, this.producerClient];
    this.current = this.producerClient = undefined;
    // A client that is not connected drops at once (a QUIT would wait in its offline queue for a
    // Redis that may never come back); a connected one quits within the shutdown bound.
    await Promise.all(
      clients.map(async (client) => {
        if (!client || client.status === 'end') return;
        if (client.status !== 'ready') return client.disconnect();
        if (!(await settlesWithin(client.quit(), Math.max(100, this.shutdownMsLeft())))) {
          client.disconnect();
        }
      }),
    );
  }
}
