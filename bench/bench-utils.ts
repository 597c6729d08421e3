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
 * Replaces the block of docs/benchmarks.md between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`
 * with `markdown`, so the page shows the figures of the last run. A bench with no block yet gets
 * one at the end of the page (move it where it belongs).
 */
export function updateBenchmarksPage(name: string, markdown: string): void {
  const file = join(__dirname, '..', 'docs', 'benchmarks.md');
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  let text = readFileSync(file, 'utf8');
  if (!text.includes(start)) text = `${text.trimEnd()}\n\n${start}\n${end}\n`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (to < from) throw new Error(`docs/benchmarks.md has ${start} without ${end} after it`);
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

/**
 * A reading of a Redis server's work so far: `INFO commandstats` calls (commands run inside Lua
 * scripts count too, as Redis counts them: the "redis.call"s of a script), the script calls
 * among them, and the server process's CPU time (`INFO cpu`), which is what the work cost it.
 */
export interface RedisWork {
  calls: number;
  scriptCalls: number;
  /** Time inside scripts (EVAL/EVALSHA usec, which includes their redis.calls' time). */
  scriptMicros: number;
  cpuMicros: number;
}

/** Reads a `RedisWork` through any client with ioredis's `info(section)`. */
export async function redisWork(client: {
  info(section: string): Promise<string>;
}): Promise<RedisWork> {
  const [commands, cpu] = await Promise.all([client.info('commandstats'), client.info('cpu')]);
  let calls = 0;
  let scriptCalls = 0;
  let scriptMicros = 0;
  for (const match of commands.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    // The bench's own readings are not the workload's.
    if (match[1] === 'info') continue;
    calls += Number(match[2]);
    if (/^(eval|evalsha|fcall)/.test(match[1])) {
      scriptCalls += Number(match[2]);
      scriptMicros += Number(match[3]);
    }
  }
  const seconds = (name: string) =>
    Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(cpu)?.[1] ?? 0);
  const cpuMicros = (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6;
  return { calls, scriptCalls, scriptMicros, cpuMicros };
}

/** Redis work per job between two `redisWork` readings. */
export function redisPerJob(
  before: RedisWork,
  after: RedisWork,
  jobs: number,
): {
  redisMicrosPerJob: number;
  commandsPerJob: number;
  scriptCallsPerJob: number;
  scriptMicrosPerJob: number;
} {
  return {
    redisMicrosPerJob: (after.cpuMicros - before.cpuMicros) / jobs,
    commandsPerJob: (after.calls - before.calls) / jobs,
    scriptCallsPerJob: (after.scriptCalls - before.scriptCalls) / jobs,
    scriptMicrosPerJob: (after.scriptMicros - before.scriptMicros) / jobs,
  };
}

/** The 1-minute load average, rounded, for "load at start / at end" fields. */
export function load1(): number {
  return Number(loadavg()[0].toFixed(2));
}

/** A sentence for a bench table whose run saw a load above 1.5 (its figures are less reliable). */
export function loadWarning(start: number, end: number): string {
  const peak = Math.max(start, end);
  return peak > 1.5
    ? `**Measured at load ${start} -> ${end} (above 1.5): other work shared the cores; re-run on a quiet machine.**`
    : '';
}

/** Runs a bench script's body when the file is run directly: prints its result as JSON, exits. */
export function runScript(body: () => Promise<unknown>): void {
  body().then(
    (result) => {
      if (result !== undefined) console.log(JSON.stringify(result, null, 2));
      process.exit(0);
    },
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
