import { existsSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import {
  CanActivate,
  ExecutionContext,
  INestApplication,
  Injectable,
  Logger,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { chromium } from 'playwright-core';
import request from 'supertest';
import {
  InvalidTenantQueueOptionsError,
  TenantQueueDashboardModule,
  TenantQueueModule,
} from '../../../lib';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';

jest.setTimeout(60_000);

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run'];

/** Lets in requests that carry `x-admin: 1`. */
@Injectable()
class HeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToHttp().getRequest().headers['x-admin'] === '1';
  }
}

async function boot(dashboard: Parameters<typeof TenantQueueDashboardModule.register>[0]) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ...testRootImports(uniquePrefix('dsec'), {}, { middleware: { mount: true } }),
      TenantQueueModule.registerQueue({ name: 'reports' }),
      TenantQueueDashboardModule.register(dashboard),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: ['warn', 'error'] });
  await app.listen(0, '127.0.0.1');
  return app;
}

const SECURITY_HEADERS = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

describe('dashboard defaults', () => {
  it('refuses to mount without a guard, naming both fixes', () => {
    let thrown: unknown;
    try {
      TenantQueueDashboardModule.register({ path: 'ops/queues' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidTenantQueueOptionsError);
    expect((thrown as Error).message).toMatch(/"dashboard\.guard": is required/);
    expect((thrown as Error).message).toMatch(/register\(\{ guard: YourAdminGuard \}\)/);
    expect((thrown as Error).message).toMatch(/allowUnauthenticated: true/);
    expect(() =>
      TenantQueueDashboardModule.register({ allowUnauthenticated: 'yes' as never }),
    ).toThrow(/allowUnauthenticated": must be a boolean/);
  });

  it('mounts open with allowUnauthenticated: true, and warns once at boot', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    let app: INestApplication | undefined;
    try {
      app = await boot({ allowUnauthenticated: true });
      const warnings = warn.mock.calls.map((call) => String(call[0]));
      expect(warnings.filter((w) => /mounted without a guard/.test(w))).toHaveLength(1);
      await request(app.getHttpServer()).get('/admin/queues/api/tenants').expect(200);
    } finally {
      warn.mockRestore();
      await app?.close();
    }
  });

  describe('headers, behind a guard', () => {
    let app: INestApplication;

    beforeAll(async () => {
      app = await boot({ guard: HeaderGuard });
    });

    afterAll(async () => {
      await app?.close();
    });

    it('sets anti-framing, nosniff and no-store on the page, keeping its CSP', async () => {
      const res = await request(app.getHttpServer()).get('/admin/queues').set('x-admin', '1');
      expect(res.status).toBe(200);
      expect(res.headers).toMatchObject(SECURITY_HEADERS);
      const csp = res.headers['content-security-policy'];
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("connect-src 'self'");
    });

    it('sets them on the JSON API and on the guard refusal too', async () => {
      const ok = await request(app.getHttpServer())
        .get('/admin/queues/api/tenants')
        .set('x-admin', '1');
      expect(ok.status).toBe(200);
      const refused = await request(app.getHttpServer()).get('/admin/queues/api/tenants');
      expect(refused.status).toBe(403);
      for (const res of [ok, refused]) {
        expect(res.headers).toMatchObject(SECURITY_HEADERS);
        expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      }
    });
  });
});

const describeBrowser = existsSync(CHROMIUM) || process.env.CI ? describe : describe.skip;

describeBrowser('dashboard in headless Chromium: it cannot be framed', () => {
  let app: INestApplication;
  let attacker: Server;
  let dashboardUrl: string;
  let attackerUrl: string;

  beforeAll(async () => {
    app = await boot({ allowUnauthenticated: true });
    dashboardUrl = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/admin/queues`;
    // Another origin (another port) that frames the dashboard, and a harmless page as a control.
    attacker = createServer((req, res) => {
      res.setHeader('content-type', 'text/html');
      if (req.url === '/harmless') return res.end('<p id="inner">framable</p>');
      const src = req.url === '/control' ? '/harmless' : dashboardUrl;
      res.end(`<iframe id="victim" src="${src}" width="800" height="600"></iframe>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => attacker?.close(resolve));
    await app?.close();
  });

  it('renders nothing of the dashboard inside a cross-origin iframe', async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage();
      // The control: the same framing page loads an ordinary page, so the check below can see one.
      await page.goto(`${attackerUrl}/control`);
      const control = page.frameLocator('#victim').locator('#inner');
      await control.waitFor({ timeout: 10_000 });
      expect(await control.textContent()).toBe('framable');

      const blocked = new Promise<string>((resolve) =>
        page.on('console', (message) => {
          if (/frame-ancestors|X-Frame-Options/i.test(message.text())) resolve(message.text());
        }),
      );
      await page.goto(attackerUrl);
      await page.locator('#victim').waitFor();
      const timeout = new Promise<string>((resolve) =>
        setTimeout(() => resolve('no refusal within 15 s'), 15_000).unref(),
      );
      expect(await Promise.race([blocked, timeout])).toMatch(
        /frame-ancestors 'none'|X-Frame-Options/,
      );
      const frame = page.frames().find((f) => f !== page.mainFrame())!;
      expect(frame.url()).not.toBe(dashboardUrl);
      // Chromium replaced the document with its error page: no dashboard element, no title.
      expect(frame.url()).toBe('chrome-error://chromewebdata/');
      expect(await frame.locator('[data-testid="tenants"], #status').count()).toBe(0);
      expect(await frame.content()).not.toContain('Tenant queues');

      // Opened directly (not framed), the page renders.
      await page.goto(dashboardUrl);
      await page.getByTestId('tenants').waitFor({ timeout: 10_000 });
      expect(await page.locator('h1').textContent()).toBe('Tenant queues');
    } finally {
      await browser.close();
    }
  });
});
