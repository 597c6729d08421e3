import { randomUUID } from 'node:crypto';
import { outsideTenantContext } from '../core/context/outside-tenant-context';
import { tenantLogFields } from '../core/context/tenant-log-fields';
import type { Logger } from '@nestjs/common';

/** What the upkeep drives on its gate (closures of the gate's own calls). */
export interface FairGateUpkeepTarget {
  /**
   * Runs the gate's upkeep script once (heartbeat of `consumerId` with `concurrency` slots, or
   * leaving with -1; slots of ended jobs freed, dispatch).
   */
  runTick(consumerId: string, concurrency: number, heartbeatTtlMs: number): Promise<void>;
  /** Resolves once the release calls in flight now have ended. */
  settleCalls(): Promise<void>;
  /** Whether a release call is in flight. */
  callsInFlight(): boolean;
}

/**
 * The fair gate's clocks: the periodic tick, the wake-up at the moment a rate-limited tenant may
 * start, this process's consumer heartbeat (its slots size the shared window), and the orderly
 * close. The admission path itself (enqueue, release) is `FairGate`'s.
 */
export class FairGateUpkeep {
  readonly consumerId = randomUUID();
  private concurrency = 0;
  private timer: NodeJS.Timeout | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;
  private wakeAt = Infinity;
  private ticking: Promise<void> | undefined;
  private isClosed = false;
  /** Ticks failed in a row: the first is logged, the others counted until one succeeds. */
  private failedTicks = 0;

  constructor(
    private readonly queueName: string,
    private readonly tickMs: number,
    private readonly target: FairGateUpkeepTarget,
    private readonly logger: Logger,
  ) {}

  /** Once closed, the gate makes no call: a live process's lease reaper frees what is left. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** A local worker consumes this queue; its concurrency sizes the shared window. */
  addConsumer(concurrency: number): void {
    this.concurrency += Math.max(1, concurrency);
    void this.tick();
  }

  start(): void {
    if (this.timer || this.isClosed) return;
    this.timer = setInterval(() => void this.tick(), this.tickMs);
    this.timer.unref();
    void this.tick();
  }

  /** Runs the upkeep script now (also on a timer); a tick already running is shared. */
  tick(leaving = false): Promise<void> {
    if (this.isClosed) return Promise.resolve();
    if (this.ticking) return this.ticking;
    const run = async () => {
      try {
        const ttl = this.tickMs * 3 + 2000;
        await this.target.runTick(this.consumerId, leaving ? -1 : this.concurrency, ttl);
        if (this.failedTicks > 0) {
          this.logger.log(
            `${tenantLogFields()} fair tick ${this.queueName} succeeds again, after ` +
              `${this.failedTicks} failed tick(s)`,
          );
          this.failedTicks = 0;
        }
      } catch (error) {
        if (!this.isClosed && this.failedTicks++ === 0) {
          this.logger.warn(
            `${tenantLogFields()} fair tick ${this.queueName}: ${error} (logged once until a ` +
              `tick succeeds)`,
          );
        }
      } finally {
        this.ticking = undefined;
      }
    };
    // Outside any tenant context, whoever asks for it (a wake timer armed by a tenant's add, a
    // release in a job): the tick acts for every tenant, and its log lines and the gate's events
    // (slow lane) would otherwise carry the caller's tenant.
    this.ticking = outsideTenantContext(run);
    return this.ticking;
  }

  /**
   * Wakes this process when the next rate-limited tenant may start, so limited tenants resume
   * on time without polling Redis in between (the regular tick covers anything later).
   */
  wakeIn(ms: number): void {
    if (!(ms >= 0) || this.isClosed || ms >= this.tickMs) return;
    const at = Date.now() + ms;
    if (this.wakeTimer && at >= this.wakeAt) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = undefined;
        this.wakeAt = Infinity;
        // A tick already running may have read Redis before the wake time: run one after it.
        void (this.ticking ?? Promise.resolve()).then(() => this.tick());
      },
      Math.max(1, ms),
    );
    this.wakeTimer.unref();
  }

  /**
   * Stops the clocks, lets the release calls and the tick in flight end, then runs one last
   * tick: this process leaving the window.
   */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.timer = undefined;
    this.wakeTimer = undefined;
    while (this.target.callsInFlight() || this.ticking) {
      await this.target.settleCalls();
      await this.ticking;
    }
    await this.tick(this.concurrency > 0);
    this.isClosed = true;
  }
}
