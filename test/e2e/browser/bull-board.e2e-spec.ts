import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { BullBoardModule } from '@bull-board/nestjs';
import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Browser, chromium } from 'playwright-core';
import {
  TenantContext,
  TenantQueue,
  TenantQueueDashboardModule,
  TenantQueueModule,
} from '../../../lib';
import { TenantBullBoardModule } from '../../../lib/bull-board';
import { CHROMIUM, CHROMIUM_ARGS, describeWithChromium } from '../../support/chromium';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';

const describeBrowser = describeWithChromium('bull-board e2e');

describeBrowser('bull-board on the module queues, in headless Chromium', () => {
  let app: INestApplication;
  let browser: Browser | undefined;
  let base: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...testRootImports(
          uniquePrefix('board'),
          { metrics: { sink: false, flushIntervalMs: 100 } },
          { middleware: { mount: true } },
        ),
        TenantQueueModule.registerQueue(
          { name: 'media' },
          // A small window: most of acme's jobs stay in the gate (no worker runs here).
          {
            name: 'exports',
            fairness: { window: 2, minWindow: 2, defaultConcurrency: 1 },
            pools: ['exports-acme'],
            routing: { globex: 'exports-acme' },
          },
          // Without turns at add: every job waiting for its turn is held in `delayed`.
          { name: 'reports', fairness: { priorityByTurn: false, window: 2, minWindow: 2 } },
        ),
        // Open for the browser test only: a real app passes its admin guard.
        TenantQueueDashboardModule.register({ path: 'admin/tenants', allowUnauthenticated: true }),
        BullBoardModule.forRoot({ route: '/queues', adapter: ExpressAdapter }),
        TenantBullBoardModule.register({ adapter: BullMQAdapter, dashboardPath: 'admin/tenants' }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const tenant = app.get(TenantContext);
    const media = app.get<TenantQueue>('TenantQueue:media');
    const exportsQueue = app.get<TenantQueue>('TenantQueue:exports');
    await tenant.run('acme', () => media.add('resize-cat-picture', { file: 'cat.png' }));
    await tenant.run('acme', () =>
      exportsQueue.addBulk(Array.from({ length: 12 }, () => ({ name: 'csv', data: {} }))),
    );
    const reports = app.get<TenantQueue>('TenantQueue:reports');
    await tenant.run('acme', () =>
      reports.addBulk(Array.from({ length: 6 }, () => ({ name: 'pdf', data: {} }))),
    );
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it("lists the module's queues and pools and shows a waiting job", async () => {
    const page = await (await browser!.newContext()).newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${base}/queues`);
    for (const name of ['media', 'exports', 'exports-acme']) {
      await page.getByRole('link', { name, exact: true }).first().waitFor({ timeout: 20_000 });
    }
    await page.goto(`${base}/queues/queue/media?status=waiting`);
    await page.getByText('resize-cat-picture').first().waitFor({ timeout: 20_000 });
    expect(errors).toEqual([]);
  });

  it("says where a fair queue's jobs wait, with the gate's count and the tenant dashboard", async () => {
    const res = await fetch(`${base}/queues/api/queues?activeQueue=exports&status=latest`);
    // The counts refresh the figure; the description shows it from the next read on.
    await fetch(`${base}/queues/api/queues?activeQueue=exports&status=latest`);
    const body = (await (
      await fetch(`${base}/queues/api/queues?activeQueue=exports&status=latest`)
    ).json()) as { queues: { name: string; description?: string; counts: { waiting: number } }[] };
    expect(res.ok).toBe(true);
    const fair = body.queues.find((q) => q.name === 'exports')!;
    expect(fair.description).toContain('fair gate');
    expect(fair.description).toContain('/admin/tenants');
    const gated = Number(/Waiting to start, all tenants: (\d+)/.exec(fair.description ?? '')?.[1]);
    expect(gated).toBe(12);
    expect(fair.counts.waiting).toBeLessThan(12);
    const pool = body.queues.find((q) => q.name === 'exports-acme')!;
    expect(pool.description).toContain('Dedicated pool of "exports"');

    const page = await (await browser!.newContext()).newPage();
    await page.goto(`${base}/queues/queue/exports`);
    await page.getByText('Waiting to start, all tenants: 12').first().waitFor({ timeout: 20_000 });
  });

  it("says where a fair queue's jobs wait by its mode: held in `delayed` till their turn without turns at add", async () => {
    type Listed = { name: string; description?: string; counts: Record<string, number> };
    const read = async () =>
      (
        (await (
          await fetch(`${base}/queues/api/queues?activeQueue=reports&status=latest`)
        ).json()) as { queues: Listed[] }
      ).queues;
    const reports = (await read()).find((q) => q.name === 'reports')!;
    // No cap, pause or rate limit: the window of 2 alone holds the other four.
    expect(reports.counts.delayed).toBe(4);
    expect(reports.description).toContain('a job waiting for its turn is delayed (due 2039)');
    expect(reports.description).not.toContain('pause, cap');
    const exportsQueue = (await read()).find((q) => q.name === 'exports')!;
    expect(exportsQueue.description).toContain('a job waiting for its turn is prioritized');
  });
});
