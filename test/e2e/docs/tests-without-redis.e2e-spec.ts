import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { REPO_ROOT } from '../../support/readme-blocks';
import { selectedProjects } from '../../support/global-setup';

/**
 * The README: "The fast subset is `npm run test:unit`: the unit specs only, no Redis". On a
 * machine without redis-server (this PATH, every command but redis-*), the unit specs run, and
 * the suites that need Redis say what to install instead of crashing on `spawn redis-server ENOENT`.
 */
describe('the tests on a machine without redis-server', () => {
  let bin: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    bin = mkdtempSync(join(tmpdir(), 'tq-no-redis-'));
    const path = join(bin, 'bin');
    mkdirSync(path);
    for (const dir of (process.env.PATH ?? '').split(delimiter)) {
      if (!dir || !existsSync(dir)) continue;
      for (const name of readdirSync(dir)) {
        if (name.startsWith('redis-') || existsSync(join(path, name))) continue;
        symlinkSync(join(dir, name), join(path, name));
      }
    }
    // This run's Redis is not the user's: the child jest starts from the README's state.
    env = { ...process.env, PATH: path };
    for (const name of ['REDIS_URL', 'TQ_TEST_OWNS_REDIS', 'TQ_TEST_CLUSTER', 'NODE_OPTIONS']) {
      delete env[name];
    }
  });

  afterAll(() => rmSync(bin, { recursive: true, force: true }));

  const jest = (...args: string[]) =>
    spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules/jest/bin/jest.js'), ...args], {
      cwd: REPO_ROOT,
      env,
      encoding: 'utf8',
    });

  it('npm run test:unit runs the unit specs (their Redis cases skipped)', () => {
    const run = jest(
      'lib/core/context/tenant-key.spec.ts',
      '--maxWorkers=1',
      '--selectProjects',
      'unit',
    );
    expect([run.status, run.stderr]).toEqual([0, expect.stringMatching(/Tests:.*\d+ passed/)]);
    expect(run.stderr).toMatch(/Tests:.*1 skipped/); // TENANT_KEY_PART_LUA, which needs Redis
  }, 120_000);

  it('a run with the e2e suites names redis-server and REDIS_URL', () => {
    const run = jest('test/e2e/docs/docs-errors.e2e-spec.ts', '--selectProjects', 'e2e');
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain(
      'These tests need Redis, and redis-server is not installed. Install it (Debian/Ubuntu: ' +
        '"sudo apt-get install -y redis-server"',
    );
    expect(run.stderr).not.toContain('ENOENT');
  }, 120_000);

  it('reads --selectProjects as jest does', () => {
    expect(
      selectedProjects(['node', 'jest', '--maxWorkers=1', '--selectProjects', 'unit']),
    ).toEqual(['unit']);
    expect(selectedProjects(['jest', '--selectProjects', 'e2e', 'unit', '-t', 'x'])).toEqual([
      'e2e',
      'unit',
    ]);
    expect(selectedProjects(['jest', '--selectProjects=unit'])).toEqual(['unit']);
    expect(selectedProjects(['jest', 'lib/x.spec.ts'])).toEqual([]);
  });
});
