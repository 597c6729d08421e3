import { CanActivate, ExecutionContext, INestApplication, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Browser, BrowserContext, Page, chromium } from 'playwright-core';
import {
  DeadLetters,
  NonRetryableError,
  TenantContext,
  TenantJob,
  TenantProcessor,
  TenantQueue,
  TenantQueueDashboardModule,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import { CHROMIUM, CHROMIUM_ARGS, describeWithChromium } from '../../support/chromium';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

jest.setTimeout(120_000);

const BASE = '/ops/queues';

/**
 * A per-tenant operator guard, as an app would write it: the `operator` cookie names the
 * operator's tenant; a route passes only when it names that tenant (`:tenantId`). The page itself
 * (an HTML shell with no data) is open to every operator; every other route is refused.
 */
@Injectable()
class TenantOperatorGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest();
    const operator = /(?:^|;\s*)operator=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    if (!operator) return false;
    const tenantId: string | undefined = req.params?.tenantId;
    if (tenantId === undefined) return req.path === BASE;
    return tenantId === operator;
  }
}

@TenantProcessor('reports', { concurrency: 2 })
class ReportsProcessor extends TenantWorkerHost {
  async process(job: TenantJob<{ fail?: boolean; secret?: string }>) {
    if (job.data.fail) throw new NonRetryableError(`report refused for ${job.data.secret}`);
  }
}

const TENANTS = ['acme', 'globex'] as const;
type Tenant = (typeof TENANTS)[number];

describeWithChromium('dashboard-tenant-operators')(
  'dashboard behind a per-tenant operator guard (headless Chromium)',
  () => {
    let app: INestApplication;
    let browser: Browser | undefined;
    let origin: string;
    const failedIds = {} as Record<Tenant, string>;
    const exportIds = {} as Record<Tenant, string>;
    const contexts = {} as Record<Tenant, BrowserContext>;
    const pages = {} as Record<Tenant, Page>;
    const errors: string[] = [];

    beforeAll(async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          ...testRootImports(
            uniquePrefix('dop'),
            { metrics: { sink: false, flushIntervalMs: 100 } },
            { middleware: { mount: true } },
          ),
          TenantQueueModule.registerQueue(
            { name: 'reports', attempts: 1 },
            // No worker: its jobs wait (in BullMQ's window, the rest in the gate).
            // Every job through the gate (its explain names the full window); turns at add are
            // the dashboard-since-when spec's.
            { name: 'exports', fairness: { priorityByTurn: false } },
          ),
          TenantQueueDashboardModule.register({
            path: BASE.slice(1),
            guard: TenantOperatorGuard,
            refreshMs: 1000,
          }),
        ],
        providers: [ReportsProcessor],
      }).compile();
      app = moduleRef.createNestApplication({ logger: false });
      await app.listen(0, '127.0.0.1');
      origin = (await app.getUrl()).replace('[::1]', '127.0.0.1');

      const tenant = app.get(TenantContext);
      const reports = app.get<TenantQueue>('TenantQueue:reports');
      const exportsQueue = app.get<TenantQueue>('TenantQueue:exports');
      for (const id of TENANTS) {
        await tenant.run(id, async () => {
          const secret = `${id}-secret-payload`;
          failedIds[id] = (await reports.add('monthly', { fail: true, secret })).id;
          // Two dead letters each: one replayed, one retried (BullMQ holds it as failed too).
          await reports.add('weekly', { fail: true, secret });
          const added = await exportsQueue.addBulk(
            Array.from({ length: 20 }, (_, n) => ({ name: 'csv', data: { n, secret } })),
          );
          exportIds[id] = added.at(-1)!.id;
        });
      }
      await waitFor(async () => {
        for (const id of TENANTS) {
          if ((await app.get(DeadLetters).list(id, { queue: 'reports' })).total < 2) return false;
        }
        return true;
      }, 'two dead letters per tenant');

      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      for (const id of TENANTS) {
        contexts[id] = await browser.newContext({ viewport: { width: 1400, height: 900 } });
        await contexts[id].addCookies([{ name: 'operator', value: id, url: origin }]);
        pages[id] = await contexts[id].newPage();
        pages[id].on('pageerror', (error) => errors.push(error.message));
      }
    });

    afterAll(async () => {
      for (const id of TENANTS) await contexts[id]?.close();
      await browser?.close();
      await app?.close();
    });

    afterEach(() => {
      expect(errors).toEqual([]);
    });

    const other = (id: Tenant): Tenant => (id === 'acme' ? 'globex' : 'acme');

    it.each(TENANTS)(
      "%s's operator searches, explains, retries and replays its own jobs",
      async (id) => {
        const page = pages[id];
        await page.goto(`${origin}${BASE}?tenant=${id}&queue=reports`);
        await page.getByTestId('tenant-title').waitFor();

        // Retry: the failed job of the tenant, from BullMQ's failed list.
        await page.locator('[data-testid="jobs-tab"][data-state="failed"]').click();
        const failed = page.locator(`tr[data-testid="job"][data-job="${failedIds[id]}"]`);
        await failed.waitFor();
        expect(await failed.textContent()).toContain(`${id}-secret-payload`);
        await failed.getByTestId('retry').click();
        await page.getByTestId('notice').getByText(`Retrying ${failedIds[id]}`).waitFor();

        // Replay: its other dead letter.
        await page.locator('[data-testid="jobs-tab"][data-state="dead-letters"]').click();
        const letters = page.getByTestId('job');
        await letters.first().waitFor();
        const letterId = await page
          .locator('tr[data-testid="job"]:not([data-job="' + failedIds[id] + '"])')
          .first()
          .getAttribute('data-job');
        await page
          .locator(`tr[data-testid="job"][data-job="${letterId}"]`)
          .getByTestId('replay')
          .click();
        await page
          .getByTestId('notice')
          .getByText(`Replayed ${letterId} as ${letterId}.r1`)
          .waitFor();

        // Explain: its last export waits in the gate.
        await page.goto(`${origin}${BASE}?tenant=${id}&queue=exports`);
        const waiting = page.locator(`tr[data-testid="job"][data-job="${exportIds[id]}"]`);
        await waiting.waitFor();
        await waiting.getByTestId('explain-button').click();
        await page.getByTestId('explain-summary').waitFor();
        expect(await page.getByTestId('explain-summary').textContent()).toMatch(
          new RegExp(`^Waiting in the fair gate, \\d+ of ${id}'s jobs ahead`),
        );

        // Search by id, from the tenant's view: the search stays within the tenant.
        await page.getByTestId('job-search').fill(exportIds[id]);
        await page.getByTestId('job-search').press('Enter');
        const found = page.getByTestId('job-found');
        await found.waitFor();
        expect(new URL(page.url()).searchParams.get('tenant')).toBe(id);
        expect(await found.getAttribute('data-queue')).toBe('exports');
      },
    );

    it.each(TENANTS)(
      "%s's operator can neither see nor act on the other tenant's jobs",
      async (id) => {
        const page = pages[id];
        const theirs = other(id);
        const secret = `${theirs}-secret-payload`;

        // The other tenant's view: refused by the guard, shown as the server's refusal.
        await page.goto(`${origin}${BASE}?tenant=${theirs}&queue=reports`);
        await page.getByText(/Could not load: Forbidden resource \(HTTP 403\)/).waitFor();
        expect(await page.content()).not.toContain(secret);

        // Their job id searched from the operator's own view: not found, nothing of it shown.
        await page.goto(
          `${origin}${BASE}?tenant=${id}&job=${encodeURIComponent(failedIds[theirs])}`,
        );
        await page.getByTestId('job-not-found').waitFor();
        expect(await page.getByTestId('job-found').count()).toBe(0);
        expect(await page.content()).not.toContain(secret);

        // The API, with this operator's cookie: their job under the operator's own tenant is 404
        // alike for explain, retry and replay, and names no state or payload of it.
        const api = page.request;
        const mine = `${origin}${BASE}/api/queues/reports/tenants/${id}`;
        const action = { headers: { 'x-tenant-queue-dashboard': '1' } };
        const bull = app.get(TenantQueueRegistry).getQueue('reports').bullQueue;
        const runs = async () => {
          const job = await bull.getJob(failedIds[theirs]);
          await waitFor(async () => (await job!.getState()) === 'failed', 'their job to be failed');
          const letter = await app.get(DeadLetters).get(theirs, failedIds[theirs], 'reports');
          return [(await bull.getJob(failedIds[theirs]))!.processedOn, letter?.replays];
        };
        const before = await runs();
        const answers = [
          await api.get(`${mine}/jobs/${failedIds[theirs]}/explain`),
          await api.post(`${mine}/jobs/${failedIds[theirs]}/retry`, action),
          await api.post(`${mine}/dead-letters/${failedIds[theirs]}/replay`, action),
          await api.get(`${origin}${BASE}/api/tenants/${id}/jobs/${failedIds[theirs]}`),
        ];
        expect(answers.map((res) => res.status())).toEqual([404, 404, 404, 200]);
        for (const res of answers) expect(await res.text()).not.toContain(secret);
        expect(((await answers[3].json()) as { found: unknown[] }).found).toEqual([]);

        // Routes naming their tenant, or none (the all-tenants list and search): the guard refuses.
        const theirRoutes = [
          api.get(`${origin}${BASE}/api/tenants/${theirs}`),
          api.get(`${origin}${BASE}/api/queues/reports/tenants/${theirs}/jobs?state=failed`),
          api.post(
            `${origin}${BASE}/api/queues/reports/tenants/${theirs}/jobs/${failedIds[theirs]}/retry`,
            action,
          ),
          api.get(`${origin}${BASE}/api/jobs/${failedIds[theirs]}`),
          api.get(`${origin}${BASE}/api/tenants`),
        ];
        expect((await Promise.all(theirRoutes)).map((res) => res.status())).toEqual([
          403, 403, 403, 403, 403,
        ]);
        // The route that took a job id alone is gone.
        const old = await api.post(
          `${origin}${BASE}/api/queues/reports/jobs/${failedIds[theirs]}/retry`,
          action,
        );
        expect(old.status()).toBe(404);
        // Nothing of theirs was retried or replayed by any of it.
        expect(await runs()).toEqual(before);
      },
    );
  },
);
