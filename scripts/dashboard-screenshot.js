// Screenshots of the dashboard taken from the sample app under load:
//   node scripts/dashboard-screenshot.js            (LOAD_SECONDS=180 by default)
// Starts `npm run sample` on a free port, sends uploads, imports and failing jobs for six
// tenants for LOAD_SECONDS, then, still under load, saves with Debian's Chromium
// sample-app/dashboard.png (acme's view: chart, settings, jobs waiting in the gate),
// sample-app/dashboard-explain.png ("Why waiting?" on one of them) and
// sample-app/dashboard-list.png (the list).
const { spawn } = require('node:child_process');
const { join } = require('node:path');
const { chromium } = require('playwright-core');

const ROOT = join(__dirname, '..');
const PASSWORD = 'screenshot';
const LOAD_SECONDS = Number(process.env.LOAD_SECONDS ?? 180);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function startSample() {
  const child = spawn(process.execPath, [join(ROOT, 'sample-app', 'start.js')], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', DASHBOARD_PASSWORD: PASSWORD },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr.on('data', (chunk) => process.stderr.write(chunk));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const found = /Sample app:\s+(http:\/\/\S+)/.exec(out);
      if (found) resolve({ child, base: found[1] });
    });
    child.on('exit', (code) => reject(new Error(`sample exited (${code}):\n${out}`)));
  });
}

async function post(base, path, tenant, body) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'x-tenant-id': tenant, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path} for ${tenant}: HTTP ${res.status} ${await res.text()}`);
}

async function put(base, path, tenant, body) {
  const res = await fetch(`${base}${path}`, {
    method: 'PUT',
    headers: { 'x-tenant-id': tenant, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path} for ${tenant}: HTTP ${res.status} ${await res.text()}`);
}

async function load(base) {
  const uploads = { acme: 12, globex: 2, initech: 1, umbrella: 3, hooli: 1, stark: 1 };
  await put(base, '/schedules/digest', 'acme', { cron: '*/15 * * * *' });
  for (let second = 0; second < LOAD_SECONDS; second++) {
    const sends = [];
    for (const [tenant, perSecond] of Object.entries(uploads)) {
      for (let i = 0; i < perSecond; i++) {
        sends.push(post(base, '/uploads', tenant, { file: `f${second}-${i}.png` }));
      }
    }
    if (second % 30 === 0) sends.push(post(base, '/imports', 'acme', { rows: 1_000_000 }));
    if (second % 10 === 5) sends.push(post(base, '/imports', 'globex', { rows: 1000 }));
    if (second % 15 === 0) sends.push(post(base, '/containment/jobs', 'initech', { failures: 5 }));
    if (second % 30 === 10) sends.push(post(base, '/containment/jobs', 'acme', { failures: 1 }));
    await Promise.all(sends);
    if (second % 30 === 0) console.log(`load: ${second} s of ${LOAD_SECONDS}`);
    await sleep(1000);
  }
}

async function main() {
  const { child, base } = await startSample();
  try {
    await load(base);
    // The screenshots are taken under load: a new flood from acme, uploads from the others.
    const last = [post(base, '/imports', 'acme', { rows: 1_000_000 })];
    for (const tenant of ['globex', 'umbrella', 'hooli']) {
      for (let i = 0; i < 5; i++)
        last.push(post(base, '/uploads', tenant, { file: `last-${i}.png` }));
    }
    await Promise.all(last);
    await sleep(3000);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    const context = await browser.newContext({
      viewport: { width: 1440, height: 1500 },
      httpCredentials: { username: 'admin', password: PASSWORD },
    });
    const page = await context.newPage();
    await page.goto(`${base}/admin/queues?tenant=acme&queue=imports`);
    await page.getByTestId('lag-chart').waitFor();
    await page.getByTestId('job-count').waitFor();
    // The top of acme's view: its queues, the chart, its settings, the first jobs in the gate.
    await page.screenshot({ path: join(ROOT, 'sample-app', 'dashboard.png') });
    // Under load acme's import chunks wait in the gate: "Why waiting?" on the last one listed.
    if (await page.getByTestId('explain-button').count()) {
      await page.getByTestId('explain-button').last().click();
      await page.getByTestId('explain-summary').waitFor();
      await page.setViewportSize({ width: 1440, height: 600 });
      await page.getByTestId('explain').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(ROOT, 'sample-app', 'dashboard-explain.png') });
    } else {
      console.warn('no job of acme waits on imports now: no dashboard-explain.png');
    }
    await page.goto(`${base}/admin/queues`);
    await page.getByTestId('tenant-row').first().waitFor();
    await page.screenshot({ path: join(ROOT, 'sample-app', 'dashboard-list.png'), fullPage: true });
    await browser.close();
    console.log('saved sample-app/dashboard.png, dashboard-explain.png and dashboard-list.png');
  } finally {
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
