import { CanActivate, ExecutionContext, INestApplication, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClsModule } from 'nestjs-cls';
import { Browser, chromium } from 'playwright-core';
import {
  NonRetryableError,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueDashboardModule,
  TenantQueueInspector,
  TenantFairness,
  TenantQueueModule,
  TenantScheduler,
  TenantWorkerHost,
} from '../lib';
import { TenantMetricsRecorder } from '../lib/metrics/tenant-metrics.recorder';
import { CHROMIUM, CHROMIUM_ARGS, describeWithChromium } from './support/chromium';
import { redisConnection, uniquePrefix } from './support/redis-url';
import { sleep, waitFor } from './support/wait';

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

const describeBrowser = describeWithChromium('visibility-dashboard');

describeBrowser('dashboard in headless Chromium', () => {
  const prefix = uniquePrefix('dash');
  let app: INestApplication;
  let browser: Browser | undefined;
  let fairness: TenantFairness;
  let url: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ClsModule.forRoot({ global: true, middleware: { mount: true } }),
        TenantQueueModule.forRoot({
          connection: redisConnection(),
          prefix,
          metrics: { sink: false, flushIntervalMs: 100 },
        }),
        TenantQueueModule.registerQueue(
          { name: 'reports', attempts: 1 },
          { name: 'exports', fairness: true },
        ),
        TenantQueueDashboardModule.register({
          path: 'admin/queues',
          guard: AdminGuard,
          refreshMs: 1000,
        }),
      ],
      providers: [ReportsProcessor],
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
        await exportsQueue.addBulk(
          Array.from({ length: exportCount }, () => ({ name: 'csv', data: {} })),
        );
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
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('lists both tenants, shows details, and pauses a tenant through the guard', async () => {
    const context = await browser!.newContext({ viewport: { width: 1280, height: 820 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(url);
    const rows = page.getByTestId('tenant-row');
    await waitFor(async () => (await rows.count()) === 4, 'four tenant rows');
    const row = (tenantId: string, queue: string) =>
      page.locator(`tr[data-tenant="${tenantId}"][data-queue="${queue}"]`);
    expect(await row('acme', 'exports').getByTestId('backlog').textContent()).toBe('25');
    expect(await row('globex', 'exports').getByTestId('backlog').textContent()).toBe('4');
    expect(await row('globex', 'reports').getByTestId('backlog').textContent()).toBe('0');

    // Detail: dead letters (rendered as text, not HTML) and schedules.
    await row('acme', 'reports').getByRole('button', { name: 'acme' }).click();
    const detail = page.getByTestId('detail');
    await detail.getByTestId('dead-letter').first().waitFor();
    expect(await detail.getByTestId('dead-letter').first().textContent()).toContain(
      '<b>quota</b> exceeded',
    );
    expect(await detail.locator('b').count()).toBe(0);
    expect(await detail.getByTestId('schedule').first().textContent()).toContain('nightly-digest');
    if (process.env.VISIBILITY_SCREENSHOT) {
      await page.screenshot({ path: process.env.VISIBILITY_SCREENSHOT, fullPage: true });
    }

    // Without the admin cookie the guard refuses the action.
    await row('globex', 'exports').getByTestId('pause').click();
    await page.getByText(/Could not pause globex: HTTP 403/).waitFor();
    expect((await fairness.getTenant('exports', 'globex')).paused).toBe(false);

    await context.addCookies([{ name: 'role', value: 'admin', url }]);
    await row('globex', 'exports').getByTestId('pause').click();
    await row('globex', 'exports').getByText('paused').waitFor();
    expect((await fairness.getTenant('exports', 'globex')).paused).toBe(true);
    expect((await app.get(TenantQueueInspector).getTenant('exports', 'globex')).paused).toBe(true);
    await row('globex', 'exports').getByTestId('resume').click();
    await row('globex', 'exports').getByText('active').waitFor();
    expect((await fairness.getTenant('exports', 'globex')).paused).toBe(false);
    expect(errors).toEqual([]);
    await context.close();
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
    expect((await fairness.getTenant('exports', 'acme')).paused).toBe(false);
  });
});
