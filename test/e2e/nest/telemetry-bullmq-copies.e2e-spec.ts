import { ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BULLMQ_VERSION } from '../../../lib/core/bullmq';
import { forkFixture, killAll } from '../../support/processes';
import { uniquePrefix } from '../../support/redis-url';

/**
 * bullmq-otel beside a BullMQ that is not the app's: what npm installs when the bullmq-otel an
 * app picked depends on another BullMQ (bullmq-otel 1.x, which depends on bullmq 5, in a bullmq 6
 * app). The module warns at boot, naming both versions and the `overrides` line.
 */
describe('telemetry: two BullMQ copies', () => {
  const children: ChildProcess[] = [];
  let apps: string;

  beforeAll(() => {
    // An app folder whose bullmq-otel (a copy of the one installed here) has its own BullMQ.
    apps = mkdtempSync(join(tmpdir(), 'tq-copies-'));
    const otel = join(apps, 'node_modules', 'bullmq-otel');
    cpSync(dirname(require.resolve('bullmq-otel/package.json')), otel, { recursive: true });
    cpSync(dirname(require.resolve('bullmq/package.json')), join(otel, 'node_modules', 'bullmq'), {
      recursive: true,
      dereference: true,
    });
    writeFileSync(
      join(apps, 'use-nested-otel.js'),
      `const Module = require('node:module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'bullmq-otel' || request.startsWith('bullmq-otel/')) {
    return resolve.call(this, ${JSON.stringify(otel)} + request.slice(11), ...rest);
  }
  return resolve.call(this, request, ...rest);
};\n`,
    );
  }, 120_000);

  afterAll(async () => {
    await killAll(children);
    rmSync(apps, { recursive: true, force: true });
  });

  async function warningsOfBoot(hook: string | undefined): Promise<string[]> {
    const file = join(apps, `warnings-${children.length}.json`);
    const child = await forkFixture(
      'telemetry-copies-app.ts',
      {
        TQ_PREFIX: uniquePrefix('copies'),
        TQ_WARNINGS_FILE: file,
        ...(hook
          ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require=${JSON.stringify(hook)}` }
          : {}),
      },
      children,
    );
    await new Promise((resolve) =>
      child.exitCode !== null ? resolve(0) : child.once('exit', resolve),
    );
    return JSON.parse(readFileSync(file, 'utf8')) as string[];
  }

  it('warns at boot, with both versions and the overrides line', async () => {
    const nested = join(apps, 'node_modules', 'bullmq-otel', 'node_modules', 'bullmq');
    const warnings = await warningsOfBoot(join(apps, 'use-nested-otel.js'));
    const warning = warnings.find((w) => w.includes('two BullMQ copies'));
    expect(warning).toBeDefined();
    expect(warning).toContain(`its own BullMQ ${BULLMQ_VERSION} (${nested}`);
    expect(warning).toContain(`not the BullMQ ${BULLMQ_VERSION} that the queues`);
    expect(warning).toContain('"overrides": { "bullmq-otel": { "bullmq": "$bullmq" } }');
  }, 120_000);

  it('says nothing when bullmq-otel uses the BullMQ of the queues', async () => {
    const warnings = await warningsOfBoot(undefined);
    expect(warnings.filter((w) => w.includes('BullMQ'))).toEqual([]);
  }, 120_000);
});
