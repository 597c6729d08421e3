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
