import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { updateReadme } from './bench-utils';

/**
 * `updateReadme(name, markdown)`, first appending an empty `<!-- bench:NAME -->` block at the end
 * of the README when there is none yet (the lead moves it where it belongs).
 */
export function publishReadmeBlock(name: string, markdown: string): void {
  const file = join(__dirname, '..', 'README.md');
  const text = readFileSync(file, 'utf8');
  if (!text.includes(`<!-- bench:${name} -->`)) {
    writeFileSync(file, `${text.trimEnd()}\n\n<!-- bench:${name} -->\n<!-- /bench:${name} -->\n`);
  }
  updateReadme(name, markdown);
}
