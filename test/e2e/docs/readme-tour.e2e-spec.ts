import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compiledEnv } from '../../support/compiled-fixtures';
import { compiledTree } from '../../support/processes';
import { REPO_ROOT } from '../../support/readme-blocks';
import { TOUR_PAGE, TourRequest, readmeTour, shownPattern } from '../../support/readme-tour';
import { openRedis } from '../../support/test-redis';
import { sleep, waitFor } from '../../support/wait';

const PASSWORD = 'tour-password';
const DEFAULT_PATIENCE_MS = 8_000; // a reader takes that long to type the next command

/**
 * Replays the tour of docs/tour.md ("Run the sample") against `npm run sample` (a real process on the
 * test Redis) and checks every answer and log line the page shows.
 */
describe('docs/tour.md "Run the sample": the tour replayed against the sample', () => {
  let sample: ChildProcess;
  const output: string[] = [];
  let base = '';
  let bannerText = '';

  beforeAll(async () => {
    // sample-app/main.ts, which `npm run sample` runs under ts-node (sample-app/start.js, run as
    // such by sample-start.e2e-spec.ts), as the JavaScript the fixtures' shared compiled tree
    // holds: the sample boots without compiling the library first (7 s of a loaded host).
    const main = join(await compiledTree(), 'sample-app', 'main.js');
    sample = spawn(process.execPath, [main], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        ...compiledEnv(),
        PORT: '0',
        NO_COLOR: '1',
        DASHBOARD_PASSWORD: PASSWORD,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    sample.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    sample.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    await waitFor(
      () => /Metrics: /.test(output.join('')) || sample.exitCode !== null,
      'the sample to print its banner',
      90_000,
    );
    bannerText = output.join('');
    const url = /Sample app:\s+(http:\/\/\S+)/.exec(bannerText)?.[1];
    if (!url) throw new Error(`the sample did not start:\n${bannerText}`);
    base = url;
  }, 120_000);

  const stopSample = async () => {
    if (sample && sample.exitCode === null && sample.signalCode === null) {
      const exited = new Promise((done) => sample.once('exit', done));
      sample.kill('SIGTERM');
      await exited;
    }
  };
  afterAll(stopSample);

  it('prints its URLs, the dashboard credentials and first commands', () => {
    expect(bannerText).toContain(`${base}/admin/queues   user admin, password ${PASSWORD}`);
    expect(bannerText).toMatch(/keys under "\{tq-sample-[0-9a-f]{6}:" \(this run only/);
    expect(bannerText).toContain(`curl -s -XPOST localhost:${new URL(base).port}/uploads`);
  });

  it('answers every request as the page shows', async () => {
    const steps = readmeTour();
    expect(steps.filter((s) => s.kind === 'request' && s.expected).length).toBeGreaterThan(20);
    let lastId = '';
    let patience = DEFAULT_PATIENCE_MS;
    const send = async (step: TourRequest) => {
      const path = step.path.replace(/<jobId>/g, lastId);
      const headers: Record<string, string> = { ...step.headers };
      if (step.auth) {
        const auth = step.auth.replace('<password>', PASSWORD);
        headers.authorization = `Basic ${Buffer.from(auth).toString('base64')}`;
      }
      const res = await fetch(`${base}${path}`, { method: step.method, headers, body: step.body });
      const text = await res.text();
      return step.statusOnly ? String(res.status) : text;
    };
    for (const step of steps) {
      if (step.kind === 'sleep') {
        // The reader waits `sleep N`; the replay polls the next step instead, for up to N s and
        // the usual slack, so it moves on as soon as the page's answer shows.
        patience = step.seconds * 1000 + 30_000;
        continue;
      }
      if (step.kind === 'log') {
        const pattern = shownPattern(step.expected);
        const logged = () =>
          output
            .join('')
            .split('\n')
            .some((line) => pattern.test(line.replace(/^.*?(LOG|WARN|ERROR) /, '$1 ')));
        await waitFor(
          logged,
          `${TOUR_PAGE}:${step.line}: the log line ${step.expected}`,
          Math.max(patience, 15_000),
        );
        continue;
      }
      let answer = '';
      const matches = () => {
        if (step.grep) return answer.includes(step.grep);
        return step.expected === undefined || shownPattern(step.expected).test(answer);
      };
      const deadline = Date.now() + patience;
      do {
        answer = await send(step);
        if (matches()) break;
        await sleep(250);
      } while (Date.now() < deadline);
      if (!matches()) {
        throw new Error(
          `${TOUR_PAGE}:${step.line}: ${step.method} ${step.path} answered\n  ${answer}\n` +
            `but the page shows\n  ${step.expected ?? `a line with ${step.grep}`}`,
        );
      }
      patience = DEFAULT_PATIENCE_MS;
      const id = /"(?:jobId|id)":"([^"]+)"/.exec(answer)?.[1];
      if (id && !/<jobId>/.test(step.path) && step.method !== 'GET') lastId = id;
    }
  }, 300_000);

  it('serves the metric series docs/visibility.md shows it serving after the tour', async () => {
    const page = readFileSync(join(REPO_ROOT, 'docs/visibility.md'), 'utf8');
    const block = /What `npm run sample` serves[\s\S]*?\n```\n([\s\S]*?)```/.exec(page)?.[1];
    const series = (block ?? '')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.replace(/ [\d.]+$/, '')); // the value varies run to run
    expect(series.length).toBeGreaterThan(3);
    const served = new Set(
      (await (await fetch(`${base}/metrics`)).text())
        .split('\n')
        .map((l) => l.replace(/ \S+$/, '')),
    );
    expect(series.filter((line) => !served.has(line))).toEqual([]);
  });

  it("removes its run's keys when stopped (the Redis is not its own)", async () => {
    const prefix = /keys under "\{([^:]+):"/.exec(bannerText)![1];
    const redis = openRedis();
    const keys = async () => {
      const found: string[] = [];
      let cursor = '0';
      do {
        const [next, page] = await redis.scan(cursor, 'MATCH', `{${prefix}:*`, 'COUNT', 1000);
        found.push(...page);
        cursor = next;
      } while (cursor !== '0');
      return found;
    };
    try {
      expect((await keys()).length).toBeGreaterThan(0);
      await stopSample();
      expect(sample.exitCode).toBe(0);
      expect(await keys()).toEqual([]);
      // It says so (a stop that printed nothing looked like a crash).
      expect(output.join('')).toMatch(
        new RegExp(`Stopped: removed its \\d+ keys under "\\{${prefix}:" from redis://`),
      );
    } finally {
      redis.disconnect();
    }
  }, 60_000);
});
