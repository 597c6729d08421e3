import { Logger } from '@nestjs/common';
import {
  DeadLetters,
  InvalidTenantIdError,
  InvalidTenantQueueOptionsError,
  TenantQueueInspector,
  TenantScheduler,
} from '../../../lib';
import { resolveTenantQueueOptions } from '../../../lib/core/options/core.options';
import { TenantMetricsRecorder } from '../../../lib/metrics/tenant-metrics.recorder';
import { IdempotencyScript } from '../../../lib/idempotency/idempotency.script';
import { HostileApp, bootHostileApp, seen } from '../../support/hostile-app';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

/** Admits `: { } * space unicode`, up to the envelope's 64 characters. */
const PATTERN = /^[^\x00-\x1f\x7f]{1,64}$/u;
const IDS = [
  'q',
  'q:entries',
  'a:b',
  '{tag}',
  '*',
  'a b',
  'c%3A',
  'c:',
  'ünïcödé-租户',
  'x'.repeat(64),
  'q"uote',
  'back\\slash',
];

describe('tenant ids that would break Redis keys (custom tenantIdPattern)', () => {
  let h: HostileApp;

  beforeAll(async () => {
    seen.length = 0;
    h = await bootHostileApp({ tenantIdPattern: PATTERN, tenants: IDS });
  });

  afterAll(async () => {
    await h?.app.close();
  });

  it('keeps every tenant its own dead letters (q and q:entries apart), list and get work', async () => {
    const failed = new Map<string, string>();
    for (const id of IDS)
      failed.set(id, (await h.plain.addForTenant(id, 'boom', { fail: true })).id);
    const deadLetters = h.app.get(DeadLetters);
    await waitFor(async () => {
      const pages = await Promise.all(IDS.map((id) => deadLetters.list(id)));
      return pages.every((page) => page.total === 1);
    }, 'one dead letter per tenant');
    for (const id of IDS) {
      const page = await deadLetters.list(id);
      expect(page.items.map((l) => [l.tenantId, l.jobId])).toEqual([[id, failed.get(id)]]);
      expect((await deadLetters.get(id, failed.get(id)!))?.tenantId).toBe(id);
    }
    // Purging q leaves q:entries (once its entries hash) alone, and c: / c%3A stay apart.
    expect(await deadLetters.purge('q')).toBe(1);
    expect(await deadLetters.purge('c:')).toBe(1);
    expect((await deadLetters.list('q:entries')).total).toBe(1);
    expect((await deadLetters.list('c%3A')).total).toBe(1);
    expect((await deadLetters.list('q')).total).toBe(0);
  });

  it('runs each tenant job under exactly its tenant, and the inspector answers for all', async () => {
    const ok = new Map<string, string>();
    for (const id of IDS) ok.set((await h.plain.addForTenant(id, 'ok', {})).id, id);
    await waitFor(
      () => [...ok.keys()].every((jobId) => seen.some((s) => s.jobId === jobId)),
      'jobs',
    );
    for (const s of seen.filter((x) => ok.has(x.jobId))) expect(s.tenantId).toBe(ok.get(s.jobId));
    await h.app.get(TenantMetricsRecorder).flush();
    const inspector = h.app.get(TenantQueueInspector);
    for (const id of IDS) {
      const stats = await inspector.getTenant('plain', id);
      expect(stats.tenantId).toBe(id);
      expect(stats.deadLetters).toBe(id === 'q' || id === 'c:' ? 0 : 1);
    }
    const listed = await inspector.listTenants({ queue: 'plain' });
    expect(listed.map((t) => t.tenantId).sort()).toEqual([...IDS].sort());
  });

  it("counts each tenant's jobs in BullMQ under its own id (a quote or backslash in it too)", async () => {
    // A fair queue's backlog is the gate's and BullMQ's count alone (no counters to fall back
    // on): a delayed job goes to BullMQ's delayed set, read by the count's Lua from the envelope.
    for (const id of IDS) await h.fair.addForTenant(id, 'later', {}, { delay: 600_000 });
    const inspector = h.app.get(TenantQueueInspector);
    for (const id of IDS) {
      expect([id, (await inspector.getTenant('fair', id)).backlog]).toEqual([id, 1]);
    }
  });

  it('keeps every tenant its own schedules, and their runs enqueue under their tenant', async () => {
    const scheduler = h.app.get(TenantScheduler);
    const job = { queue: 'plain', name: 'nightly' };
    for (const id of IDS) await scheduler.upsert(id, 'nightly', { cron: '0 3 * * *', job });
    await scheduler.upsert('q:entries', 'extra', { cron: '0 4 * * *', job });
    for (const id of IDS) {
      const keys = (await scheduler.list(id)).map((s) => [s.tenantId, s.key]);
      expect(keys).toEqual(
        id === 'q:entries'
          ? [
              [id, 'extra'],
              [id, 'nightly'],
            ]
          : [[id, 'nightly']],
      );
    }
    h.clock.set('2026-01-01T03:00:00Z');
    const before = seen.length;
    const tick = await scheduler.tick();
    expect(tick.jobIds).toHaveLength(IDS.length);
    expect(new Set(tick.jobIds).size).toBe(IDS.length);
    await waitFor(() => seen.length - before === IDS.length, 'every scheduled run');
    const tenants = seen.slice(before).map((s) => s.tenantId);
    expect(tenants.sort()).toEqual([...IDS].sort());
  });

  it('refuses an id with an unpaired surrogate, which the pattern admits but Redis cannot keep apart', async () => {
    // Redis receives UTF-8, where each lone surrogate becomes U+FFFD: "a\uD800" and "a\uD801"
    // would share every key (counters, dead letters), and a fair queue's script fails on them.
    const counts = () => Promise.all([h.plain, h.fair].map((q) => q.bullQueue.getJobCounts()));
    const before = await counts();
    for (const id of ['a\uD800', 'a\uDC01', '\uDFFFb']) {
      expect(PATTERN.test(id)).toBe(true);
      await expect(h.plain.addForTenant(id, 'ok', {})).rejects.toThrow(InvalidTenantIdError);
      await expect(h.fair.addForTenant(id, 'ok', {})).rejects.toThrow(/unpaired UTF-16 surrogate/);
      await expect(h.app.get(DeadLetters).list(id)).rejects.toThrow(InvalidTenantIdError);
    }
    expect(await counts()).toEqual(before);
  });

  it('gives each (tenant, run id) its own idempotency keys', () => {
    expect(IdempotencyScript.keys('p', 'a:b', 'c')).not.toEqual(
      IdempotencyScript.keys('p', 'a', 'b:c'),
    );
    expect(IdempotencyScript.keys('p', 'acme', 'r1')[0]).toBe('p:~run:acme:r1:done');
  });
});

describe('tenantIdPattern checks at boot', () => {
  it('warns once, naming the 64-character limit, when the pattern admits longer ids', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      resolveTenantQueueOptions({ connection: {}, tenantIdPattern: /^[a-z0-9:]+$/ });
      resolveTenantQueueOptions({ connection: {}, tenantIdPattern: PATTERN });
      const messages = warn.mock.calls.map((call) => String(call[0]));
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatch(/longer than 64 characters.*refused at enqueue/);
    } finally {
      warn.mockRestore();
    }
  });

  it('refuses a pattern with the g or y flag (test() would alternate)', () => {
    expect(() =>
      resolveTenantQueueOptions({ connection: {}, tenantIdPattern: /^[a-z]{1,10}$/g }),
    ).toThrow(InvalidTenantQueueOptionsError);
  });
});
