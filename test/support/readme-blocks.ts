import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** A TypeScript block of the README that claims to be a complete file (`// file: <name>`). */
export interface ReadmeFile {
  /** The `## ` section it sits in: the blocks of one section form one project. */
  section: string;
  /** `app.module.ts`, from the block's first line. */
  name: string;
  /** 1-based line of the block's first line in README.md. */
  line: number;
  source: string;
}

export const REPO_ROOT = resolve(__dirname, '../..');
const FILE_MARK = /^\/\/ file: ([\w.-]+\.ts)\s*$/;

/** Every complete TypeScript block of README.md, in order. */
export function readmeFiles(readme = join(REPO_ROOT, 'README.md')): ReadmeFile[] {
  const lines = readFileSync(readme, 'utf8').split('\n');
  const files: ReadmeFile[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S*)/.exec(lines[i]);
    if (!fence) {
      if (lines[i].startsWith('## ')) section = lines[i].slice(3).trim();
      continue;
    }
    const end = lines.findIndex((line, j) => j > i && line.startsWith('```'));
    const body = lines.slice(i + 1, end);
    const mark = FILE_MARK.exec(body[0] ?? '');
    if (/^(ts|typescript)$/.test(fence[1]) && mark) {
      files.push({ section, name: mark[1], line: i + 2, source: body.join('\n') + '\n' });
    }
    i = end;
  }
  return files;
}

/** A folder name for a section: its words, lower case, joined by dashes. */
export function sectionSlug(section: string): string {
  return section
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}
