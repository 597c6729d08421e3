import { CanActivate, ExecutionContext, INestApplication, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Browser, BrowserContext, Page, chromium } from 'playwright-core';
import {
  DeadLetters,
  InMemoryTenantDirectory,
  TenantCron,
  NonRetryableError,
  TenantContext,
  TenantFairness,
  TenantTiers,
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
import { sleep, waitFor } from '../../support/wait';

jest.setTimeout(90_000);

/** Reads are open; actions need the `role=admin` cookie. */
@Injectable()
class AdminGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest();
    if (req.method === 'GET') return true;
    return /(^|;\s*)role=admin(;|$)/.test(req.headers.cookie ?? '');
  }
}

@TenantProcessor('reports', { concurrency: 2 })
class ReportsProcessor extends TenantWorkerHost {
  async process(job: TenantJob<{ fail?: boolean }>) {
    if (job.data.fail) throw new NonRetryableError('<b>quota</b> exceeded for this report');
    await sleep(15);
  }
}

@Injectable()
class Digests {
  @TenantCron('0 9 * * *', { name: 'morning-digest', timezone: 'tenant' })
  async digest() {}
}

const describeBrowser = describeWithChromium('visibility-dashboard');

describeBrowser('dashboard in headless Chromium', () => {
  const prefix = uniquePrefix('dash');
  let app: INestApplication;
  let browser: Browser | undefined;
  let fairness: TenantFairness;
  let url: string;
  let exportIds: string[];
  let context: BrowserContext;
  let page: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...testRootImports(
          prefix,
          {
            metrics: { sink: false, flushIntervalMs: 100 },
            tiers: { free: { weight: 1 }, pro: { weight: 4 } },
            directory: {
              useValue: new InMemoryTenantDirectory([
                { id: 'acme', timezone: 'Asia/Tokyo', tier: 'free' },
                { id: 'globex' },
              ]),
            },
          },
          { middleware: { mount: true } },
        ),
        TenantQueueModule.registerQueue(
          { name: 'reports', attempts: 1 },
          // No worker: its jobs wait (16 in BullMQ, the rest in the gate), "no consumer".
          // Every job through the gate (its explain names the full window); turns at add are
          // the dashboard-since-when spec's.
          { name: 'exports', fairness: { priorityByTurn: false } },
        ),
        TenantQueueDashboardModule.register({
          path: 'admin/queues',
          guard: AdminGuard,
          refreshMs: 1000,
        }),
      ],
      providers: [ReportsProcessor, Digests],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/admin/queues`;
    fairness = app.get(TenantFairness);

    const tenant = app.get(TenantContext);
    const reports = app.get<TenantQueue>('TenantQueue:reports');
    const exportsQueue = app.get<TenantQueue>('TenantQueue:exports');
    for (const [id, reportCount, exportCount] of [
      ['acme', 40, 25],
      ['globex', 10, 4],
    ] as const) {
      await tenant.run(id, async () => {
        await reports.addBulk(Array.from({ length: reportCount }, () => ({ name: 'r', data: {} })));
        const added = await exportsQueue.addBulk(
          Array.from({ length: exportCount }, (_, n) => ({ name: 'csv', data: { n } })),
        );
        if (id === 'acme') exportIds = added.map((job) => job.id);
      });
    }
    await tenant.run('acme', () => reports.add('monthly-report', { fail: true }));
    await app.get(TenantScheduler).upsert('acme', 'nightly-digest', {
      cron: '0 9 * * *',
      timezone: 'Europe/Paris',
      job: { queue: 'exports', name: 'digest' },
    });
    const inspector = app.get(TenantQueueInspector);
    await waitFor(async () => {
      await app.get(TenantMetricsRecorder).flush();
      const acme = await inspector.getTenant('reports', 'acme');
      return acme.results.completed === 40 && acme.deadLetters === 1;
    }, 'the reports to run');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    page = await context.newPage();
    page.on('pageerror', (error) => errors.push(error.message));
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await app?.close();
  });

  afterEach(() => {
    expect(errors).toEqual([]);
  });

  it('groups rows by tenant, flags the queue without a consumer, and filters by search', async () => {
    await page.goto(url);
    const groups = page.getByTestId('tenant-row');
    await waitFor(async () => (await groups.count()) === 2, 'two tenant groups');
    const sub = (tenantId: string, queue: string) =>
      page.locator(`tr[data-testid="queue-row"][data-tenant="${tenantId}"][data-queue="${queue}"]`);
    expect(await sub('acme', 'exports').getByTestId('backlog').textContent()).toBe('25');
    expect(await sub('globex', 'exports').getByTestId('backlog').textContent()).toBe('4');
    expect(await sub('globex', 'reports').getByTestId('backlog').textContent()).toBe('0');
    const acme = page.locator('tr[data-testid="tenant-row"][data-tenant="acme"]');
    expect(await acme.getByTestId('backlog').textContent()).toBe('25');
    expect(await acme.getByTestId('final-failures').textContent()).toBe('1');
    // Every figure names its window.
    expect(await page.locator('#tenants thead').textContent()).toContain('Completed (last 5 min)');
    // exports has producers here and no worker anywhere; reports has one.
    const exportsSummary = page.locator('tr[data-testid="queue-summary"][data-queue="exports"]');
    await exportsSummary.getByTestId('no-consumer').waitFor();
    const reportsSummary = page.locator('tr[data-testid="queue-summary"][data-queue="reports"]');
    expect(await reportsSummary.getByTestId('workers').textContent()).toBe('1');
    expect(await reportsSummary.getByTestId('no-consumer').count()).toBe(0);

    await page.getByTestId('search').fill('glo');
    await waitFor(async () => (await groups.count()) === 1, 'one group after the search');
    expect(await groups.first().getAttribute('data-tenant')).toBe('globex');
    expect(new URL(page.url()).searchParams.get('q')).toBe('glo');
    expect(await page.getByTestId('tenant-count').textContent()).toBe('1 of 2 tenants');
    // The filtered list survives a reload (the search is in the URL).
    await page.reload();
    await waitFor(async () => (await groups.count()) === 1, 'still one group after reload');
  });

  it('opens a tenant as its own view from a deep link, with the chart of the last hour', async () => {
    await page.goto(`${url}?tenant=acme&queue=reports`);
    await page.getByTestId('tenant-title').waitFor();
    expect(await page.getByTestId('tenant-title').textContent()).toBe('Tenant acme');
    expect(await page.getByTestId('tenants').count()).toBe(0);
    const chart = page.getByTestId('lag-chart');
    await chart.waitFor();
    const p95 = chart.locator('path[data-series="p95"]');
    expect(Number(await p95.getAttribute('data-points'))).toBeGreaterThanOrEqual(1);
    expect(await chart.getByTestId('throughput-bar').count()).toBeGreaterThanOrEqual(1);
    // Final outcomes and attempt failures apart; only the queues acme uses.
    const reports = page.locator('tr[data-testid="detail-queue"][data-queue="reports"]');
    expect(await reports.getByTestId('completed').textContent()).toBe('40');
    expect(await reports.getByTestId('final-failures').textContent()).toBe('1');
    expect(await page.getByTestId('detail-queue').count()).toBe(2);
    // Pause is offered only where the queue has a fair gate.
    expect(await reports.getByTestId('pause').count()).toBe(0);
    // Its TenantScheduler schedule and the @TenantCron in its own zone, each with its next run.
    const schedules = page.getByTestId('schedule');
    expect(await schedules.count()).toBe(2);
    expect(await schedules.nth(0).textContent()).toContain('nightly-digest');
    const cron = await schedules.nth(1).textContent();
    expect(cron).toContain('@TenantCron');
    expect(cron).toContain("Asia/Tokyo (tenant's zone)");
    const detail = (await (await fetch(`${url}/api/tenants/acme`)).json()) as {
      schedules: { source: string; nextRunAt: string }[];
    };
    const [view] = detail.schedules.filter((s) => s.source === '@TenantCron');
    // 09:00 in Tokyo is 00:00 UTC.
    expect(view.nextRunAt).toMatch(/T00:00:00\.000Z$/);
    // Back to the list by link.
    await page.getByTestId('back').click();
    await page.getByTestId('tenants').waitFor();
  });

  it('replays a dead letter through the guard, showing the server message on refusal', async () => {
    await page.goto(`${url}?tenant=acme&queue=reports`);
    await page.locator('[data-testid="jobs-tab"][data-state="dead-letters"]').click();
    const letter = page.getByTestId('job').first();
    await letter.waitFor();
    expect(await letter.textContent()).toContain('<b>quota</b> exceeded');
    expect(await page.locator('#jobs b').count()).toBe(0);
    const jobId = (await letter.getAttribute('data-job'))!;

    await letter.getByTestId('replay').click();
    await page.getByText(/Could not replay .*: Forbidden resource \(HTTP 403\)/).waitFor();

    await context.addCookies([{ name: 'role', value: 'admin', url }]);
    await page.getByTestId('job').first().getByTestId('replay').click();
    await page.getByText(`Replayed ${jobId} as ${jobId}.r1`).waitFor();
    // The replay ran (and failed again, as its data says): a new dead letter, under the new id.
    await waitFor(async () => {
      const letters = await app.get(DeadLetters).list('acme', { queue: 'reports' });
      return letters.items.some((l) => l.jobId === `${jobId}.r1`);
    }, 'the replay to run');
  });

  it('edits a weight, shows a refusal in the server words, and explains a waiting job', async () => {
    await context.addCookies([{ name: 'role', value: 'admin', url }]);
    await page.goto(`${url}?tenant=globex&queue=exports`);
    const form = page.getByTestId('settings');
    await form.waitFor();
    await form.getByTestId('setting-weight').fill('-1');
    await form.getByTestId('save-settings').click();
    await page
      .getByText(/Could not save the settings of globex on exports: .*weight.*> 0/)
      .waitFor();
    expect((await fairness.getTenant('exports', 'globex')).weight).toBe(1);
    await page.getByTestId('settings').getByTestId('setting-weight').fill('3');
    await page.getByTestId('settings').getByTestId('save-settings').click();
    await page.getByText('Saved the settings of globex on exports').waitFor();
    expect((await fairness.getTenant('exports', 'globex')).weight).toBe(3);
    expect(await page.getByTestId('setting-weight').inputValue()).toBe('3');

    // acme's last export waits in the gate (the window of 16 is full, nobody consumes).
    await page.goto(`${url}?tenant=acme&queue=exports`);
    const last = page.locator(`tr[data-testid="job"][data-job="${exportIds.at(-1)}"]`);
    await last.waitFor();
    expect(await last.textContent()).toContain('"n":24');
    await last.getByTestId('explain-button').click();
    const summary = page.getByTestId('explain-summary');
    await summary.waitFor();
    expect(await summary.textContent()).toMatch(
      /^Waiting in the fair gate, \d+ of acme's jobs ahead/,
    );
    expect(await page.getByTestId('explain').textContent()).toContain('window-full');
    const waiting = await app.get(TenantQueueInspector).explain('exports', exportIds.at(-1)!);
    expect(await summary.textContent()).toBe(waiting.summary);

    // Search by job id: the first export waits in BullMQ with no consumer.
    await page.getByTestId('job-search').fill(exportIds[0]);
    await page.getByTestId('job-search').press('Enter');
    const found = page.getByTestId('job-found');
    await found.waitFor();
    expect(await found.getAttribute('data-queue')).toBe('exports');
    expect(await found.getByTestId('explain-summary').textContent()).toContain('no worker');
    if (process.env.VISIBILITY_SCREENSHOT) {
      await page.goto(`${url}?tenant=acme&queue=reports`);
      await page.getByTestId('lag-chart').waitFor();
      await page.screenshot({ path: process.env.VISIBILITY_SCREENSHOT, fullPage: true });
    }
  });

  it('assigns a tier through the guard, and says where the tier comes from', async () => {
    await context.clearCookies();
    await page.goto(`${url}?tenant=acme&queue=exports`);
    const form = page.getByTestId('tier');
    await form.waitFor();
    expect(await form.getByTestId('tier-current').textContent()).toContain(
      'Runs as free (from its directory record)',
    );
    await form.getByTestId('tier-select').selectOption('pro');
    await form.getByTestId('save-tier').click();
    await page
      .getByText(/Could not assign a tier to acme: Forbidden resource \(HTTP 403\)/)
      .waitFor();
    expect((await app.get(TenantTiers).profile('acme')).tier).toBe('free');

    await context.addCookies([{ name: 'role', value: 'admin', url }]);
    await page.getByTestId('tier').getByTestId('tier-select').selectOption('pro');
    await page.getByTestId('tier').getByTestId('save-tier').click();
    await page.getByText('Assigned tier pro to acme').waitFor();
    await page.getByText('Runs as pro (assigned here; its directory record says free)').waitFor();
    expect((await app.get(TenantTiers).profile('acme')).tier).toBe('pro');
    // The fair gate runs acme with the tier's weight at once.
    expect((await fairness.getTenant('exports', 'acme')).weight).toBe(4);

    await page.getByTestId('tier').getByTestId('tier-select').selectOption('');
    await page.getByTestId('tier').getByTestId('save-tier').click();
    await page.getByText('acme is back on its directory tier (free)').waitFor();
    expect((await fairness.getTenant('exports', 'acme')).weight).toBe(1);
  });

  it('retries a failed job, refuses what cannot be retried, and purges dead letters', async () => {
    const admin = { cookie: 'role=admin', 'x-tenant-queue-dashboard': '1' };
    const post = (path: string, body?: unknown) =>
      fetch(`${url}/api${path}`, {
        method: 'POST',
        headers: { ...admin, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    const failed = (await (
      await fetch(`${url}/api/queues/reports/tenants/acme/jobs?state=failed`)
    ).json()) as { jobs: { id: string; reason: string; stack: string }[] };
    expect(failed.jobs.length).toBeGreaterThanOrEqual(1);
    expect(failed.jobs[0].reason).toContain('<b>quota</b> exceeded');
    expect(failed.jobs[0].stack).toContain('NonRetryableError');
    const retried = await post(
      `/queues/reports/tenants/acme/jobs/${encodeURIComponent(failed.jobs[0].id)}/retry`,
    );
    expect(retried.status).toBe(200);
    expect(((await retried.json()) as { message: string }).message).toMatch(/^Retrying /);

    const waiting = await post(
      `/queues/exports/tenants/acme/jobs/${encodeURIComponent(exportIds[0])}/retry`,
    );
    expect(waiting.status).toBe(400);
    expect(((await waiting.json()) as { message: string }).message).toMatch(
      /is waiting, not failed/,
    );
    const badBody = await post('/queues/exports/tenants/acme/settings', { colour: 'red' });
    expect(badBody.status).toBe(400);
    expect(((await badBody.json()) as { message: string }).message).toMatch(/Nothing was changed/);
    // One bad value refuses the whole change: the good one is not written either.
    const mixed = await post('/queues/exports/tenants/acme/settings', {
      weight: 5,
      concurrency: -1,
    });
    expect(mixed.status).toBe(400);
    expect(((await mixed.json()) as { message: string }).message).toMatch(/concurrency/);
    expect((await fairness.getTenant('exports', 'acme')).weight).toBe(1);
    const badState = await fetch(`${url}/api/queues/reports/tenants/acme/jobs?state=lost`);
    expect(badState.status).toBe(400);

    await waitFor(
      async () => (await app.get(DeadLetters).list('acme', { queue: 'reports' })).total > 0,
      'a dead letter',
    );
    // An empty or repeated jobId (a form's blank field) is refused and removes nothing; only a
    // request without one purges them all.
    const letters = (await app.get(DeadLetters).list('acme', { queue: 'reports' })).total;
    for (const query of ['?jobId=', '?jobId=a&jobId=b']) {
      const refused = await post(`/queues/reports/tenants/acme/dead-letters/purge${query}`);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { message: string }).message).toMatch(/leave it out/);
    }
    expect((await app.get(DeadLetters).list('acme', { queue: 'reports' })).total).toBe(letters);
    const purged = await post('/queues/reports/tenants/acme/dead-letters/purge');
    expect(purged.status).toBe(200);
    expect(((await purged.json()) as { removed: number }).removed).toBeGreaterThanOrEqual(1);
    expect((await app.get(DeadLetters).list('acme', { queue: 'reports' })).total).toBe(0);
  });

  it('refuses a cross-site style POST without the dashboard header', async () => {
    const res = await fetch(`${url}/api/queues/exports/tenants/acme/pause`, {
      method: 'POST',
      headers: { cookie: 'role=admin' },
    });
    expect(res.status).toBe(403);
    const unknown = await fetch(`${url}/api/queues/nope/tenants/acme/pause`, {
      method: 'POST',
      headers: { cookie: 'role=admin', 'x-tenant-queue-dashboard': '1' },
    });
    expect(unknown.status).toBe(404);
    const plain = await fetch(`${url}/api/queues/reports/tenants/acme/pause`, {
      method: 'POST',
      headers: { cookie: 'role=admin', 'x-tenant-queue-dashboard': '1' },
    });
    expect(plain.status).toBe(400);
    expect(((await plain.json()) as { message: string }).message).toMatch(/no fair gate/);
    expect((await fairness.getTenant('exports', 'acme')).paused).toBe(false);
  });
});
