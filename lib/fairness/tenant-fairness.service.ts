import { Injectable } from '@nestjs/common';
import { TenantEnvelopeCodec } from '../core/envelope/tenant-envelope.codec';
import { InvalidTenantQueueOptionsError } from '../core/errors';
import { Messages } from '../tenant-queue.messages';
import { TenantRateLimit } from '../core/types/tenant-tier-options.interface';
import { checkRateLimit } from '../core/options/tiers.options';
import { FairGateRegistry } from './fair-gate.registry';
import { decodeRate, encodeRate } from './modes/rate-limit/rate';
import { SlowLaneEvent } from './slow-lane-event.interface';
import { TenantFairnessState } from './tenant-fairness-state.interface';

const num = (value: unknown): number | null =>
  value === null || value === undefined || value === false ? null : Number(value);

/**
 * Runtime API of the fair gate: read a tenant's backlog, in-flight count, weight, cap, floor,
 * pause and slow-lane state on a fair queue, and change weight, cap, floor and pause. Changes
 * live in Redis and apply at once in every process.
 * @publicApi
 */
@Injectable()
export class TenantFairness {
  constructor(
    private readonly gates: FairGateRegistry,
    private readonly codec: TenantEnvelopeCodec,
  ) {}

  async getTenant(queue: string, tenantId: string): Promise<TenantFairnessState> {
    const gate = this.gates.get(queue);
    this.codec.assertTenantId(tenantId);
    await this.gates.ensureHints(gate, tenantId);
    const reply = await gate.admin(tenantId, 'get');
    const [w, dw, cap, dcap, inf, paused, slow, backlog, failures, rl, drl, limitedUntil] = reply;
    const [min, dmin, pausedAt, byTurn, since] = reply.slice(12);
    const rateLimitOverride = decodeRate(rl);
    const rateLimit = rateLimitOverride ?? decodeRate(drl) ?? gate.options.rateLimit ?? false;
    const weightOverride = num(w);
    const concurrencyOverride = num(cap);
    const concurrency = concurrencyOverride ?? num(dcap) ?? gate.options.defaultConcurrency;
    const minConcurrencyOverride = num(min);
    const floor = minConcurrencyOverride ?? num(dmin) ?? gate.options.defaultMinConcurrency;
    return {
      queue,
      tenantId,
      backlog: Number(backlog),
      queuedByTurn: Number(byTurn ?? 0),
      inFlight: Math.max(0, Number(inf ?? 0)),
      weight: weightOverride ?? num(dw) ?? gate.options.defaultWeight,
      weightOverride,
      concurrency,
      concurrencyOverride,
      minConcurrency: concurrency > 0 ? Math.min(floor, concurrency) : floor,
      minConcurrencyOverride,
      paused: paused === '1',
      slowLane: slow === '1',
      // After slowLane: answers shown as JSON (the README tours) keep their order.
      pausedAt: paused === '1' ? num(pausedAt) : null,
      recentFailures: Number(failures),
      rateLimit,
      rateLimitOverride,
      rateLimitedUntil:
        limitedUntil === null || limitedUntil === undefined ? null : Number(limitedUntil),
      oldestQueuedAt: num(since),
    };
  }

  /** Sets a tenant's weight on a queue at run time (`null` goes back to directory/default). */
  async setWeight(queue: string, tenantId: string, weight: number | null): Promise<void> {
    checkWeight(weight);
    await this.change(queue, tenantId, 'weight', weight);
  }

  /**
   * Sets a tenant's concurrency cap at run time (0 = none; `null` goes back to the default). On
   * a queue of a budget it is set on every queue of the budget this app registers.
   */
  async setConcurrency(queue: string, tenantId: string, max: number | null): Promise<void> {
    checkConcurrency(max);
    await this.change(queue, tenantId, 'cap', max);
  }

  /**
   * Sets a tenant's guaranteed floor at run time: the slots it keeps whenever it has work, even
   * under other tenants' floods; its cap stays the burst ceiling (0 = no floor; `null` goes back
   * to its tier, directory record or the queue's `fairness.defaultMinConcurrency`). Not above the
   * tenant's cap. Logs a warning when the floors the gate knows add up to more than the queue's
   * live worker slots.
   */
  async setMinConcurrency(queue: string, tenantId: string, min: number | null): Promise<void> {
    if (min !== null && !(Number.isInteger(min) && min >= 0)) {
      throw new InvalidTenantQueueOptionsError(
        Messages.invalidFairnessValue(
          'minConcurrency',
          'it must be an integer >= 0 (0 = no floor)',
        ),
      );
    }
    if (min) {
      const { concurrency } = await this.getTenant(queue, tenantId);
      if (concurrency > 0 && min > concurrency) {
        throw new InvalidTenantQueueOptionsError(
          Messages.floorAboveCap(queue, tenantId, min, concurrency),
        );
      }
    }
    await this.change(queue, tenantId, 'min', min);
    if (min) await this.gates.checkFloors(this.gates.get(queue));
  }

  /**
   * Sets a tenant's rate limit on a queue at run time, in every process at once: `{ max, per,
   * burst? }`, `false` for no limit, `null` to go back to its tier, directory record or the
   * queue's `fairness.rateLimit`. On a queue of a budget it is set on every queue of the budget
   * this app registers.
   */
  async setRateLimit(
    queue: string,
    tenantId: string,
    limit: TenantRateLimit | false | null,
  ): Promise<void> {
    checkRate(limit);
    const gate = this.gates.get(queue);
    this.codec.assertTenantId(tenantId);
    // A budget's queues share one rate limit per tenant: set on one, it is set on all.
    for (const each of this.gates.budgetGates(gate)) {
      await each.admin(tenantId, 'rate', limit === null ? '' : encodeRate(limit));
    }
  }

  /** Stops admitting a tenant's jobs on a queue (running ones finish); they wait in its backlog. */
  async pause(queue: string, tenantId: string): Promise<void> {
    await this.change(queue, tenantId, 'pause', null);
  }

  async resume(queue: string, tenantId: string): Promise<void> {
    await this.change(queue, tenantId, 'resume', null);
  }

  /** Listens for slow-lane changes seen by this process; returns an unsubscribe function. */
  onSlowLane(listener: (event: SlowLaneEvent) => void): () => void {
    return this.gates.onSlowLane(listener);
  }

  private async change(queue: string, tenantId: string, op: string, value: number | null) {
    const gate = this.gates.get(queue);
    this.codec.assertTenantId(tenantId);
    // A budget's queues share one cap per tenant: set on one, it is set on all.
    const gates = op === 'cap' ? this.gates.budgetGates(gate) : [gate];
    for (const each of gates) await each.admin(tenantId, op, value === null ? '' : String(value));
  }
}

/** A run-time weight (`null` clears it): > 0 and <= 1,000,000, else a typed error. */
export function checkWeight(weight: number | null): void {
  if (weight !== null && !(Number.isFinite(weight) && weight > 0 && weight <= 1e6)) {
    throw new InvalidTenantQueueOptionsError(
      Messages.invalidFairnessValue('weight', 'it must be > 0 and <= 1000000'),
    );
  }
}

/** A run-time cap (`null` clears it): an integer >= 0 (0 = none), else a typed error. */
export function checkConcurrency(max: number | null): void {
  if (max !== null && !(Number.isInteger(max) && max >= 0)) {
    throw new InvalidTenantQueueOptionsError(
      Messages.invalidFairnessValue('concurrency', 'it must be an integer >= 0'),
    );
  }
}

/** A run-time rate limit (`false` = none, `null` clears it), else a typed error. */
export function checkRate(limit: TenantRateLimit | false | null): void {
  if (limit === null || limit === false) return;
  try {
    checkRateLimit('rateLimit', limit);
  } catch (error) {
    throw new InvalidTenantQueueOptionsError(Messages.invalidRateLimit((error as Error).message));
  }
}
