import { createHash } from 'node:crypto';
import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { tenantLogFields } from '../context/tenant-log-fields';
import { canonicalJson } from '../json/canonical-json';
import { TenantQueueLogger } from '../logging/tenant-queue-logger';
import { TenantQueueRedis, settlesWithin } from '../redis/tenant-queue.redis';
import { Messages } from '../../tenant-queue.messages';
import { TenantQueueRegistry } from './tenant-queue.registry';

/** How often each process says, per queue, which fairness settings it runs the queue with. */
export const SETTINGS_CHECK_MS = 30_000;
/** Settings seen within this long come from a process that is still running. */
const LIVE_MS = 2.5 * SETTINGS_CHECK_MS;
/** Settings not seen for this long are forgotten. */
const FORGET_MS = 60 * 60_000;

/**
 * Warns when two live processes on one Redis run a queue with different fairness settings (one
 * with `fairness`, one without, or other options): BullMQ's queue is shared, so jobs added by a
 * process without the gate skip it, and each process admits by its own rules. Each process
 * writes its settings per queue every `SETTINGS_CHECK_MS` (`<queue's key prefix>:~settings`, a
 * hash of settings digest -> when last seen and what they are) and reads the others'; off the
 * per-job path, two commands per queue per check.
 */
@Injectable()
export class QueueSettingsCheck implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new TenantQueueLogger('TenantQueue');
  private readonly warned = new Set<string>();
  private timer?: NodeJS.Timeout;
  private running?: Promise<string[]>;

  constructor(
    private readonly registry: TenantQueueRegistry,
    private readonly redis: TenantQueueRedis,
  ) {}

  onApplicationBootstrap(): void {
    if (this.registry.getQueueNames().length === 0) return;
    const run = () => {
      this.running ??= this.check().finally(() => (this.running = undefined));
    };
    run();
    this.timer = setInterval(run, SETTINGS_CHECK_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    // A check started while Redis was away waits for it: within the shutdown bound only.
    if (this.running) await settlesWithin(this.running, this.redis.shutdownMsLeft());
  }

  /**
   * Writes this process's settings of every queue and warns, once per queue and settings, about
   * other settings a live process wrote. Returns the queues warned about in this call.
   */
  async check(): Promise<string[]> {
    const warned: string[] = [];
    try {
      const client = this.redis.client;
      const now = Date.now();
      for (const name of this.registry.getQueueNames()) {
        const { definition } = this.registry.getQueue(name);
        const fairness = (definition.registered as { fairness?: unknown }).fairness;
        const ours = fairness ? canonicalJson(fairness) : 'off';
        const digest = createHash('sha1').update(ours).digest('hex').slice(0, 16);
        const key = `${definition.bullPrefix}:~settings`;
        const [, [, seen]] = (await client
          .multi()
          .hset(key, digest, `${now} ${ours.slice(0, 500)}`)
          .hgetall(key)
          .exec()) as [unknown, [unknown, Record<string, string>]];
        const stale: string[] = [];
        for (const [other, value] of Object.entries(seen ?? {})) {
          if (other === digest) continue;
          const space = value.indexOf(' ');
          const at = Number(value.slice(0, space));
          if (!(now - at < FORGET_MS)) stale.push(other);
          if (!(now - at < LIVE_MS) || this.warned.has(`${name}\n${other}`)) continue;
          this.warned.add(`${name}\n${other}`);
          warned.push(name);
          this.logger.warn(
            `${tenantLogFields()} ${Messages.queueSettingsDiffer(name, ours, value.slice(space + 1))}`,
          );
        }
        if (stale.length > 0) await client.hdel(key, ...stale);
      }
    } catch {
      // Redis away: the connection's own lines say so; the next check runs later.
    }
    return warned;
  }
}
