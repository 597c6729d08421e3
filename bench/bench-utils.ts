import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

/** The machine a figure was measured on, stored with every result. */
export function machine() {
  let redis = 'unknown';
  try {
    redis = execFileSync('redis-server', ['--version']).toString().trim();
  } catch {
    /* not installed */
  }
  return {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    redis,
    loadAverage: loadavg(),
  };
}

export function writeResult(name: string, result: object): string {
  const dir = join(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ measuredAt: new Date().toISOString(), machine: machine(), ...result }, null, 2)}\n`,
  );
  return file;
}

/**
 * Replaces the README block between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` with
 * `markdown`, so the README shows the figures of the last run. A bench with no block yet gets one
 * at the end of the README (move it where it belongs).
 */
export function updateReadme(name: string, markdown: string): void {
  const file = join(__dirname, '..', 'README.md');
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  let text = readFileSync(file, 'utf8');
  if (!text.includes(start)) text = `${text.trimEnd()}\n\n${start}\n${end}\n`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (to < from) throw new Error(`README.md has ${start} without ${end} after it`);
  writeFileSync(
    file,
    `${text.slice(0, from + start.length)}\n${markdown.trim()}\n${text.slice(to)}`,
  );
}

/** Builds a Markdown table from a header row and body rows. */
export function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

// gate: Redis cost of a bench phase, from INFO deltas of the bench's own redis-server.

interface RedisInfoClient {
  info(section: string): Promise<string>;
}

export interface RedisSnapshot {
  cpuMicros: number;
  /** Every command Redis ran, scripts' inner `redis.call`s included (EVAL/EVALSHA not counted). */
  calls: number;
  /** Time inside scripts (EVALSHA/EVAL usec). */
  scriptMicros: number;
}

export async function redisSnapshot(client: RedisInfoClient): Promise<RedisSnapshot> {
  const cpu = await client.info('cpu');
  const field = (name: string) => Number(new RegExp(`${name}:([0-9.]+)`).exec(cpu)?.[1] ?? 0);
  const cpuMicros = (field('used_cpu_sys') + field('used_cpu_user')) * 1e6;
  let calls = 0;
  let scriptMicros = 0;
  for (const line of (await client.info('commandstats')).split('\n')) {
    const match = /^cmdstat_([a-z|]+):calls=(\d+),usec=(\d+)/.exec(line.trim());
    if (!match) continue;
    if (match[1] === 'evalsha' || match[1] === 'eval') scriptMicros += Number(match[3]);
    else if (match[1] !== 'info') calls += Number(match[2]);
  }
  return { cpuMicros, calls, scriptMicros };
}

/** Redis µs of CPU, commands and script µs per job between two snapshots. */
export function redisPerJob(before: RedisSnapshot, after: RedisSnapshot, jobs: number) {
  const per = (a: number, b: number) => Number(((b - a) / jobs).toFixed(1));
  return {
    redisCpuMicrosPerJob: per(before.cpuMicros, after.cpuMicros),
    redisCommandsPerJob: per(before.calls, after.calls),
    redisScriptMicrosPerJob: per(before.scriptMicros, after.scriptMicros),
  };
}

/** The 1-minute load average, rounded, for a figure's row. */
export const load1 = () => Number(loadavg()[0].toFixed(2));
