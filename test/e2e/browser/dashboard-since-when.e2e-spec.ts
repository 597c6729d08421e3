import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { INestApplication, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Browser, BrowserContext, Locator, Page, chromium } from 'playwright-core';
import {
  DeadLetters,
  InMemoryTenantDirectory,
  NonRetryableError,
  TenantContext,
  TenantCron,
  TenantFairness,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueDashboardModule,
  TenantQueueInspector,
  TenantQueueModule,
  TenantScheduler,
  TenantWorkerHost,
} from '../../../lib';
import { TenantMetricsRecorder } from '../../../lib/metrics/tenant-metrics.recorder';
import { CHROMIUM, CHROMIUM_ARGS, describeWithChromium } from '../../support/chromium';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

jest.setTimeout(180_000);

/** Where the screenshots go when asked (`DASHBOARD_SCREENSHOTS=docs/images`). */
const SHOTS = process.env.DASHBOARD_SCREENSHOTS;
/** The operator's browser is in New York; acme lives in Lord Howe (UTC+10:30/+11). */
const BROWSER_ZONE = 'America/New_York';
const MANY = Array.from({ length: 24 }, (_, n) => `tenant-${String(n + 1).padStart(2, '0')}`);
const BACKLOG = 1806;

@TenantProcessor('reports', { concurrency: 4 })
class ReportsProcessor extends TenantWorkerHost {
  async process(job: TenantJob<{ fail?: boolean }>) {
    if (job.data.fail) throw new NonRetryableError('upstream refused the report');
  }
}

@TenantProcessor('api-sync', { concurrency: 2 })
class ApiSyncProcessor extends TenantWorkerHost {
  async process() {}
}

@Injectable()
class Digests {
  @TenantCron('0 9 * * *', { name: 'morning-digest', timezone: 'tenant' })
  async digest() {}
}

/** Runs in the page: the format the dashboard promises, computed the same way for a check. */
function formatIn(ms: number, zone: string): string {
  const parts: Record<string, string> = {};
  for (const p of new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  }).formatToParts(new Date(ms))) {
    parts[p.type] = p.value;
  }
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second} ${parts.timeZoneName}`;
}

const TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (EST|EDT|GMT-[45])$/;

/**
 * For every numeric column of a table: how far (px) the right edge of the number's text is from
 * the right edge of its heading's text, and whether the number's text lies under the heading's
 * own cell (not under the next one).
 */
async function columnOffsets(table: Locator) {
  return table.evaluate((root) => {
    const node = root as unknown as DomNode;
    const doc = (globalThis as unknown as { document: { createRange(): DomRange } }).document;
    const textBox = (cell: DomNode) => {
      const range = doc.createRange();
      range.selectNodeContents(cell);
      return range.getBoundingClientRect();
    };
    const heads = Array.from(node.querySelectorAll('thead th'));
    const out: { head: string; value: string; offset: number; under: boolean }[] = [];
    for (const row of Array.from(node.querySelectorAll('tbody tr')).slice(0, 6)) {
      Array.from(row.children).forEach((cell, i) => {
        if (!cell.classList.contains('num') || !heads[i] || !cell.textContent) return;
        const value = textBox(cell);
        const head = textBox(heads[i]);
        const column = heads[i].getBoundingClientRect();
        out.push({
          head: heads[i].textContent ?? '',
          value: cell.textContent,
          offset: Math.abs(value.right - head.right),
          under: value.left >= column.left - 1 && value.right <= column.right + 1,
        });
      });
    }
    return out;
  });
}

/** The little of the DOM the page-side check uses (the test compiles without the DOM lib). */
interface Box {
  left: number;
  right: number;
}
interface DomNode {
  textContent: string | null;
  classList: { contains(name: string): boolean };
  children: ArrayLike<DomNode>;
  getBoundingClientRect(): Box;
  querySelectorAll(selector: string): ArrayLike<DomNode>;
}
interface DomRange {
  selectNodeContents(node: DomNode): void;
  getBoundingClientRect(): Box;
}

describeWithChromium('dashboard-since-when')(
  'dashboard answers which tenant, why, since when (headless Chromium)',
  () => {
    let app: INestApplication;
    let browser: Browser | undefined;
    let context: BrowserContext;
    let page: Page;
    let url: string;
    let pausedAt: number;
    const errors: string[] = [];

    beforeAll(async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          ...testRootImports(
            uniquePrefix('dsw'),
            {
              metrics: { sink: false, flushIntervalMs: 100 },
              directory: {
                useValue: new InMemoryTenantDirectory([
                  { id: 'acme', timezone: 'Australia/Lord_Howe' },
                  { id: 'globex' },
                  { id: 'initech' },
                  { id: 'umbrella' },
                  ...MANY.map((id) => ({ id })),
                ]),
              },
            },
            { middleware: { mount: true } },
          ),
          TenantQueueModule.registerQueue(
            { name: 'reports', attempts: 1 },
            // No worker: a flood waits here (16 in BullMQ's window, the rest in the gate).
            { name: 'exports', fairness: true },
            // One start per 10 minutes per tenant: the second job of a tenant is held.
            { name: 'api-sync', fairness: { rateLimit: { max: 1, per: 600_000 } } },
          ),
          TenantQueueDashboardModule.register({ allowUnauthenticated: true, refreshMs: 2000 }),
        ],
        providers: [ReportsProcessor, ApiSyncProcessor, Digests],
      }).compile();
      app = moduleRef.createNestApplication({ logger: ['error'] });
      await app.listen(0, '127.0.0.1');
      url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/admin/queues`;

      const tenant = app.get(TenantContext);
      const queue = (name: string) => app.get<TenantQueue>(`TenantQueue:${name}`);
      await tenant.run('acme', async () => {
        for (let from = 0; from < BACKLOG; from += 500) {
          const size = Math.min(500, BACKLOG - from);
          await queue('exports').addBulk(
            Array.from({ length: size }, (_, n) => ({ name: 'csv', data: { n: from + n } })),
          );
        }
        await queue('reports').addBulk([
          { name: 'monthly', data: { fail: true } },
          { name: 'weekly', data: { fail: true } },
        ]);
      });
      for (const id of ['globex', ...MANY]) {
        await tenant.run(id, () =>
          queue('reports').addBulk(Array.from({ length: 5 }, () => ({ name: 'r', data: {} }))),
        );
      }
      for (const id of MANY.slice(0, 6)) {
        await tenant.run(id, () => queue('reports').add('broken', { fail: true }));
      }
      await tenant.run('umbrella', () =>
        queue('api-sync').addBulk(Array.from({ length: 4 }, () => ({ name: 'sync', data: {} }))),
      );
      await tenant.run('initech', () => queue('exports').add('csv', { n: 0 }));
      await app.get(TenantFairness).pause('exports', 'initech');
      pausedAt = (await app.get(TenantFairness).getTenant('exports', 'initech')).pausedAt!;
      await app.get(TenantScheduler).upsert('acme', 'nightly-digest', {
        cron: '0 9 * * *',
        timezone: 'Australia/Lord_Howe',
        job: { queue: 'exports', name: 'digest' },
      });
      const inspector = app.get(TenantQueueInspector);
      await waitFor(
        async () => {
          await app.get(TenantMetricsRecorder).flush();
          const [globex, acme, umbrella] = await Promise.all([
            inspector.getTenant('reports', 'globex'),
            inspector.getTenant('reports', 'acme'),
            inspector.getTenant('api-sync', 'umbrella'),
          ]);
          return (
            globex.results.completed === 5 &&
            acme.deadLetters === 2 &&
            umbrella.rateLimited &&
            umbrella.results.completed === 1
          );
        },
        'the reports to run and umbrella to be held by its rate limit',
        60_000,
      );
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      context = await browser.newContext({
        viewport: { width: 1500, height: 1000 },
        timezoneId: BROWSER_ZONE,
      });
      page = await context.newPage();
      page.on('pageerror', (error) => errors.push(error.message));
      if (SHOTS) mkdirSync(SHOTS, { recursive: true });
    });

    afterAll(async () => {
      await context?.close();
      await browser?.close();
      await app?.close();
    });

    afterEach(() => {
      expect(errors).toEqual([]);
    });

    const shot = async (name: string) => {
      if (SHOTS)
        await page.screenshot({ path: join(SHOTS, `dashboard-${name}.png`), fullPage: true });
    };

    it('lists tenants before queues, folds the internal queues, and aligns every number under its heading', async () => {
      await page.goto(url);
      await page.locator('tr[data-testid="tenant-row"][data-tenant="acme"]').waitFor();
      await waitFor(
        async () => (await page.getByTestId('tenant-row').count()) === 2 + 2 + MANY.length,
        'every tenant in the list',
      );
      const headings = await page.locator('main h2').allTextContents();
      expect(headings[0]).toMatch(/^Tenants /);
      expect(headings[1]).toMatch(/^Queues /);
      const tenantsBox = await page.getByTestId('tenants').boundingBox();
      const queuesBox = await page.getByTestId('queues').boundingBox();
      expect(tenantsBox!.y).toBeLessThan(queuesBox!.y);
      // The scheduler's queues are in a closed <details>, not among the app's queues.
      const summaries = page.locator('[data-testid="queues"] [data-testid="queue-summary"]');
      expect(
        await summaries.evaluateAll((rows) =>
          rows.map((r) =>
            (r as unknown as { getAttribute(n: string): string }).getAttribute('data-queue'),
          ),
        ),
      ).toEqual(['reports', 'exports', 'api-sync']);
      const internal = page.getByTestId('internal-queues');
      const folded = (await internal.locator('summary').textContent())!;
      expect(folded).toMatch(/^2 internal queue\(s\) of the scheduler: /);
      expect(folded).toContain('tq-cron-fanout');
      expect(await internal.evaluate((d) => (d as unknown as { open: boolean }).open)).toBe(false);
      expect(await internal.locator('tr[data-queue="tq-cron"]').isVisible()).toBe(false);

      for (const testid of ['queues', 'tenants']) {
        const offsets = await columnOffsets(page.getByTestId(testid));
        expect(offsets.length).toBeGreaterThan(10);
        for (const o of offsets) {
          // Right-aligned with its heading (within 2 px), inside the heading's own column.
          expect({ ...o, offset: Math.round(o.offset) <= 2 }).toEqual({
            ...o,
            offset: true,
            under: true,
          });
        }
      }
      const reports = page.locator('[data-testid="queue-summary"][data-queue="reports"]');
      expect(await reports.getByTestId('workers').textContent()).toBe('1');
      await shot('main');
    });

    it('says since when: oldest waiting, paused since, rate limited since, and lag only while live', async () => {
      await page.goto(url);
      const row = (tenantId: string, queue: string) =>
        page.locator(
          `tr[data-testid="queue-row"][data-tenant="${tenantId}"][data-queue="${queue}"]`,
        );
      await row('acme', 'exports').waitFor();
      // acme's flood is live: a lag and an oldest waiting age, and the backlog with separators.
      const acme = row('acme', 'exports');
      expect(await acme.getByTestId('lag').getAttribute('data-live')).toBe('yes');
      expect(await acme.getByTestId('oldest').textContent()).toMatch(/^\d+(\.\d+)? (ms|s|min)$/);
      expect(await acme.getByTestId('backlog').textContent()).toBe('1,806');
      // Why it waits: no worker consumes exports.
      expect(await acme.getByTestId('why-waiting').textContent()).toBe('no consumer');
      expect(
        await page
          .locator('tr[data-testid="tenant-row"][data-tenant="acme"]')
          .getByTestId('oldest')
          .textContent(),
      ).toMatch(/^\d+(\.\d+)? (ms|s|min)$/);
      // globex ran everything: nothing waits, so its last lag is no alarm.
      const idle = row('globex', 'reports').getByTestId('lag');
      expect(await idle.textContent()).toBe('idle');
      expect(await idle.getAttribute('data-live')).toBe('no');
      expect(await idle.getAttribute('class')).not.toContain('late');
      expect(await row('globex', 'reports').getByTestId('oldest').textContent()).toBe('\u2013');
      // initech is paused on exports: since when, in the page's one format and zone.
      expect(await row('initech', 'exports').getByTestId('paused-since').textContent()).toMatch(
        new RegExp(`^since ${formatIn(pausedAt, BROWSER_ZONE)} \\(.+ ago\\)$`),
      );
      // umbrella is held by its rate limit: since its oldest job began to wait.
      const limited = row('umbrella', 'api-sync');
      expect(await limited.getByTestId('state').textContent()).toContain('rate limited');
      const since = (await limited.getByTestId('limited-since').textContent())!;
      expect(since.replace(/^held since /, '')).toMatch(TIME);
    });

    it('shows enqueued, started and finished times on job rows and dead letters, and "50 of 1,790"', async () => {
      // By turn (the default): the gate lists the jobs waiting their turn in BullMQ too.
      const state = await app.get(TenantFairness).getTenant('exports', 'acme');
      const gated = state.backlog + state.queuedByTurn;
      expect(gated).toBeGreaterThan(1000);
      await page.goto(`${url}?tenant=acme&queue=exports`);
      const count = page.getByTestId('job-count');
      await count.waitFor();
      expect(await count.textContent()).toBe(
        `50 of ${gated.toLocaleString('en-US')} waiting their turn`,
      );
      const first = page.getByTestId('job').first();
      expect(await first.getByTestId('enqueued-at').textContent()).toMatch(TIME);
      expect(await first.getByTestId('started-at').textContent()).toBe('\u2013');
      // Dead letters: enqueued, started and failed, each as BullMQ and the envelope recorded them.
      await page.goto(`${url}?tenant=acme&queue=reports`);
      await page.locator('[data-testid="jobs-tab"][data-state="dead-letters"]').click();
      await page.getByTestId('job-count').getByText('2 dead letter(s)').waitFor();
      const letters = await app.get(DeadLetters).list('acme', { queue: 'reports' });
      for (const letter of letters.items) {
        const shown = page.locator(`tr[data-testid="job"][data-job="${letter.jobId}"]`);
        expect(await shown.getByTestId('enqueued-at').textContent()).toBe(
          formatIn(Date.parse(letter.envelope.enqueuedAt), BROWSER_ZONE),
        );
        expect(await shown.getByTestId('started-at').textContent()).toBe(
          formatIn(Date.parse(letter.startedAt!), BROWSER_ZONE),
        );
        expect(await shown.getByTestId('ended-at').textContent()).toBe(
          formatIn(Date.parse(letter.failedAt), BROWSER_ZONE),
        );
      }
      await shot('dead-letters');
      // BullMQ's failed list: the same three times.
      await page.locator('[data-testid="jobs-tab"][data-state="failed"]').click();
      // Every failed job of every tenant was read (fewer than 500): the count is exact.
      await page
        .getByTestId('job-count')
        .getByText(/^2 failed job\(s\)$/)
        .waitFor();
      for (const testid of ['enqueued-at', 'started-at', 'ended-at']) {
        expect(await page.getByTestId('job').first().getByTestId(testid).textContent()).toMatch(
          TIME,
        );
      }
    });

    it("shows schedules in the tenant's zone, and the explain box in the page's one format", async () => {
      await page.goto(`${url}?tenant=acme&queue=exports`);
      const schedules = page.getByTestId('schedule');
      await schedules.first().waitFor();
      expect(await schedules.count()).toBe(2);
      for (let i = 0; i < 2; i++) {
        // 09:00 where acme lives, labelled with that zone (not 5 PM in the browser's).
        expect(await schedules.nth(i).getByTestId('next-run').textContent()).toMatch(
          /^\d{4}-\d\d-\d\d 09:00:00 Australia\/Lord_Howe \(GMT\+1[01](:30)?\)$/,
        );
      }
      await shot('tenant');

      // umbrella's held job: the explain summary names the time in the page's format.
      await page.goto(`${url}?tenant=umbrella&queue=api-sync`);
      const held = page.getByTestId('job').first();
      await held.waitFor();
      await held.getByTestId('explain-button').click();
      const summary = page.getByTestId('explain-summary');
      await summary.waitFor();
      const text = (await summary.textContent())!;
      expect(text).toMatch(/rate limit/);
      expect(text).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:/);
      expect(text).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (EST|EDT|GMT-[45])/);
      const until = await page.getByTestId('explain').locator('dd').allTextContents();
      expect(until.filter((t) => TIME.test(t)).length).toBeGreaterThanOrEqual(1);
      await shot('explain');
    });
  },
);
