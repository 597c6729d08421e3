import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './readme-blocks';

/** One request of the sample's tour (docs/tour.md), with what the page shows it answers. */
export interface TourRequest {
  kind: 'request';
  /** Line of the page, for failure messages. */
  line: number;
  method: string;
  /** Path and query, e.g. `/uploads/jobs/<jobId>`. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** `-u user:password` */
  auth?: string;
  /** `-w '%{http_code}'`: the answer is the status code. */
  statusOnly: boolean;
  /** `| grep X`: the answer must contain X. */
  grep?: string;
  /** The JSON (or status) the page shows under or beside the command. */
  expected?: string;
}

export type TourStep =
  | TourRequest
  | { kind: 'sleep'; line: number; seconds: number }
  | { kind: 'log'; line: number; expected: string };

/** Shell words of one command line (single and double quotes, no expansions). */
function shellWords(line: string): { words: string[]; comment?: string } {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === ' ' || c === '\t') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === '#' && word === undefined) {
      return { words, comment: line.slice(i + 1).trim() };
    } else word = (word ?? '') + c;
  }
  if (word !== undefined) words.push(word);
  return { words };
}

function parseCurl(words: string[], line: number): TourRequest {
  const request: TourRequest = {
    kind: 'request',
    line,
    method: 'GET',
    path: '/',
    headers: {},
    statusOnly: false,
  };
  for (let i = 1; i < words.length; i++) {
    const w = words[i];
    if (w === '-s' || w === '-o') {
      if (w === '-o') i++;
    } else if (w.startsWith('-X')) request.method = w.slice(2) || words[++i];
    else if (w === '-H') {
      const [name, ...value] = words[++i].split(':');
      request.headers[name.trim().toLowerCase()] = value.join(':').trim();
    } else if (w === '-d') {
      request.body = words[++i];
      if (request.method === 'GET') request.method = 'POST';
    } else if (w === '-u') request.auth = words[++i];
    else if (w === '-w') request.statusOnly = words[++i].includes('%{http_code}');
    else if (w === '|') {
      if (words[i + 1] === 'grep') request.grep = words[i + 2];
      break;
    } else if (/^(localhost|127\.0\.0\.1):3000/.test(w)) {
      request.path = w.replace(/^[^/]*/, '') || '/';
    } else
      throw new Error(`${TOUR_PAGE}:${line}: curl option ${w} is not understood by the replay`);
  }
  return request;
}

/** The JSON part of a `# {...}` comment (prose after two spaces is the page's aside). */
function shownJson(comment: string): string | undefined {
  if (!/^[[{]/.test(comment)) return undefined;
  return comment.split(/\s{2,}/)[0];
}

/** The page that holds the tour, from the repository root. */
export const TOUR_PAGE = 'docs/tour.md';

/**
 * The steps of every bash block of the tour page: requests, the answers shown (`# {...}` below a
 * command, or `# 204` beside it), `sleep N`, and `# worker log: <line>` lines.
 */
export function readmeTour(page = TOUR_PAGE): TourStep[] {
  const lines = readFileSync(join(REPO_ROOT, page), 'utf8').split('\n');
  const steps: TourStep[] = [];
  let inBash = false;
  let last: TourRequest | undefined;
  lines.forEach((text, index) => {
    const line = index + 1;
    if (text.startsWith('```')) {
      inBash = !inBash && text.trim() === '```bash';
      last = undefined;
      return;
    }
    if (!inBash) return;
    const trimmed = text.trim();
    if (trimmed.startsWith('#')) {
      const comment = trimmed.slice(1).trim();
      const log = /^worker log: (.*)$/.exec(comment);
      if (log) steps.push({ kind: 'log', line, expected: log[1] });
      else if (last && last.expected === undefined) last.expected = shownJson(comment);
      return;
    }
    const { words, comment } = shellWords(trimmed);
    if (words[0] === 'sleep') {
      steps.push({ kind: 'sleep', line, seconds: Number(words[1]) });
      last = undefined;
    } else if (words[0] === 'curl') {
      last = parseCurl(words, line);
      if (comment && last.statusOnly && /^\d{3}\b/.test(comment))
        last.expected = comment.slice(0, 3);
      else if (comment) last.expected = shownJson(comment);
      steps.push(last);
    }
  });
  return steps;
}

/**
 * What the page shows, as a pattern over the real answer: `...` (or `…`) stands for anything,
 * an id shortened with `...` (six or more id characters, then `...`) for any id, and timestamps, epoch milliseconds and hex instance ids
 * for any of their kind. Everything else must match exactly, key order included.
 */
export function shownPattern(shown: string): RegExp {
  const tokens =
    /([0-9A-Za-z_-]{6,}(?:\.\.\.|…))|(\.\.\.|…)|(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)|(\b\d{12,}\b)|("[0-9a-f]{8}")/g;
  let pattern = '';
  let at = 0;
  for (const m of shown.matchAll(tokens)) {
    pattern += escape(shown.slice(at, m.index));
    if (m[1]) pattern += '[^"]*';
    else if (m[2]) pattern += '.*';
    else if (m[3]) pattern += '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?Z';
    else if (m[4]) pattern += '\\d+';
    else pattern += '"[0-9a-f]{8}"';
    at = m.index! + m[0].length;
  }
  return new RegExp(`^${pattern}${escape(shown.slice(at))}$`);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
