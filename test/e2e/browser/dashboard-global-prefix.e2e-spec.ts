import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Browser, chromium } from 'playwright-core';
import { TenantQueueDashboardModule, TenantQueueModule, TenantQueueRegistry } from '../../../lib';
import { CHROMIUM, CHROMIUM_ARGS, describeWithChromium } from '../../support/chromium';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

describeWithChromium('dashboard-global-prefix')(
  'the dashboard under a global prefix (headless Chromium)',
  () => {
    let app: INestApplication;
    let browser: Browser | undefined;
    let origin: string;

    beforeAll(async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          ...testRootImports(uniquePrefix('dprefix'), { metrics: { sink: false } }),
          TenantQueueModule.registerQueue({ name: 'reports' }),
          TenantQueueDashboardModule.register({ allowUnauthenticated: true }),
        ],
      }).compile();
      app = moduleRef.createNestApplication({ logger: false });
      app.setGlobalPrefix('api');
      await app.listen(0, '127.0.0.1');
      origin = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      await app.get(TenantQueueRegistry).getQueue('reports').addForTenant('acme', 'r', {});
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    });

    afterAll(async () => {
      await browser?.close();
      await app?.close();
    });

    it('calls its API under the prefix, and its links and forms stay there', async () => {
      const page = await browser!.newPage();
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(`${origin}/api/admin/queues/`);
      const acme = page.locator('tr[data-testid="tenant-row"][data-tenant="acme"]');
      await acme.waitFor();
      expect(await acme.getByTestId('backlog').textContent()).toBe('1');
      expect(await page.getByTestId('status').textContent()).toMatch(/^Updated/);

      await acme.getByTestId('tenant-link').click();
      await page.getByTestId('tenant-title').waitFor();
      expect(new URL(page.url()).pathname).toMatch(/^\/api\/admin\/queues\/?$/);
      expect(await page.getByTestId('tenant-title').textContent()).toBe('Tenant acme');

      await page.getByTestId('job-search').fill('no-such-job');
      await page.getByTestId('job-search').press('Enter');
      await page.getByTestId('job-not-found').waitFor();
      expect(new URL(page.url()).pathname).toMatch(/^\/api\/admin\/queues\/?$/);

      await page.locator('h1 a').click();
      await waitFor(async () => (await acme.count()) === 1, 'the list again');
      expect(new URL(page.url()).search).toBe('');
      expect(errors).toEqual([]);
      await page.close();
    });
  },
);
