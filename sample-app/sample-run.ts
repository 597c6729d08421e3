import { randomBytes } from 'node:crypto';
import IORedis from 'ioredis';

/** What one `npm run sample` uses: its key prefix, its dashboard password, and whether it cleans up. */
export interface SampleRun {
  prefix: string;
  /** True when the prefix is this run's own (removed on exit); false with `SAMPLE_PREFIX`. */
  fresh: boolean;
  password: string;
  /** True when DASHBOARD_PASSWORD was unset and the sample made one up. */
  generatedPassword: boolean;
}

/**
 * A fresh key prefix per run (`tq-sample-<6 hex>`), so a run never inherits another run's jobs
 * or settings; `SAMPLE_PREFIX=name` keeps one across runs. The dashboard's password is
 * `DASHBOARD_PASSWORD`, or one made up for this run (printed in the banner).
 */
export function sampleRun(env: NodeJS.ProcessEnv = process.env): SampleRun {
  const password = env.DASHBOARD_PASSWORD || randomBytes(6).toString('hex');
  return {
    prefix: env.SAMPLE_PREFIX || `tq-sample-${randomBytes(3).toString('hex')}`,
    fresh: !env.SAMPLE_PREFIX,
    password,
    generatedPassword: !env.DASHBOARD_PASSWORD,
  };
}

/**
 * Removes the run's keys from a Redis the sample did not start (a private one is simply
 * stopped). Every key the module writes starts with `{<prefix>:`; SCAN is fine at shutdown.
 */
export async function removeRunKeys(url: string, prefix: string): Promise<number> {
  const redis = new IORedis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  let removed = 0;
  try {
    await redis.connect();
    for (const match of [`{${prefix}:*`, `${prefix}:*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 500);
        cursor = next;
        if (keys.length > 0) removed += await redis.unlink(...keys);
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
  return removed;
}

/** The banner: where things are, the dashboard's credentials, and the first curl commands. */
export function banner(url: string, redisUrl: string, run: SampleRun): string {
  const base = url.replace('http://127.0.0.1', 'localhost').replace(/^http:\/\//, '');
  const json = `-H 'content-type: application/json'`;
  return [
    '',
    `Sample app:  ${url}   (any tenant id works: acme, globex and initech have zones and tiers)`,
    `Redis:       ${redisUrl}, keys under "{${run.prefix}:" ` +
      (run.fresh ? '(this run only, removed on exit)' : '(SAMPLE_PREFIX: kept)'),
    `Dashboard:   ${url}/admin/queues   user admin, password ${run.password}` +
      (run.generatedPassword ? '   (made up for this run; set DASHBOARD_PASSWORD to choose)' : ''),
    `Metrics:     ${url}/metrics`,
    '',
    'Try (docs/tour.md has the whole tour):',
    `  curl -s -XPOST ${base}/uploads -H 'x-tenant-id: acme' ${json} -d '{"file":"cat.png"}'`,
    `  curl -s ${base}/uploads/thumbnails -H 'x-tenant-id: acme'`,
    `  curl -s -XPOST ${base}/containment/jobs -H 'x-tenant-id: globex' ${json} -d '{"failures":5}'`,
    `  curl -s -u admin:${run.password} ${base}/admin/queues/api/tenants`,
    '',
  ].join('\n');
}
