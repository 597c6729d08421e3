import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** Runs `body` in a fresh Node process where prom-client and @nestjs/terminus cannot be found. */
function withoutPeers(body: string): string {
  const script = `
    const Module = require('node:module');
    const resolve = Module._resolveFilename;
    Module._resolveFilename = function (request, ...rest) {
      if (request === 'prom-client' || request.startsWith('@nestjs/terminus')) {
        const error = new Error("Cannot find module '" + request + "'");
        error.code = 'MODULE_NOT_FOUND';
        throw error;
      }
      return resolve.call(this, request, ...rest);
    };
    require('reflect-metadata');
    ${body}
  `;
  return execFileSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
    cwd: join(__dirname, '..', '..'),
    encoding: 'utf8',
    timeout: 60_000,
  }).trim();
}

describe('optional peer dependencies', () => {
  it('loads the main barrel and falls back to a no-op sink without prom-client', () => {
    const out = withoutPeers(`
      const lib = require('./lib');
      const { createMetricsSink } = require('./lib/metrics/metrics-sink.provider');
      const { resolveMetricsOptions } = require('./lib/metrics/metrics.options');
      const sink = createMetricsSink(resolveMetricsOptions({ connection: {} }));
      let explicit = '';
      try {
        createMetricsSink(resolveMetricsOptions({ connection: {}, metrics: { sink: 'prometheus' } }));
      } catch (error) {
        explicit = error.constructor.name + ': ' + error.message;
      }
      console.log(JSON.stringify({
        inspector: typeof lib.TenantQueueInspector,
        dashboard: typeof lib.TenantQueueDashboardModule,
        noop: sink === lib.noopMetricsSink,
        explicit,
      }));
    `);
    const result = JSON.parse(out.split('\n').pop()!);
    expect(result).toMatchObject({ inspector: 'function', dashboard: 'function', noop: true });
    expect(result.explicit).toMatch(/InvalidTenantQueueOptionsError: .*metrics\.sink.*prom-client/);
  });
});
