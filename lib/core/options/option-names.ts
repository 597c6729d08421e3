import { isDeepStrictEqual } from 'node:util';
import { ValidationError, getMetadataStorage } from 'class-validator';
import { Messages } from '../../tenant-queue.messages';

/**
 * Names users reach for that mean another option of the same object: the name another object
 * uses for the same thing (a tier's `maxConcurrency` is a queue's `defaultConcurrency`).
 */
const ALIASES: readonly (readonly string[])[] = [
  ['defaultConcurrency', 'maxConcurrency', 'concurrency', 'maxInFlight'],
  ['defaultMinConcurrency', 'minConcurrency'],
  ['defaultWeight', 'weight'],
  ['maxBacklog', 'backlog', 'maxQueued'],
  ['order', 'strategies', 'resolvers'],
  ['secret', 'secrets', 'signingSecret'],
  ['tickInterval', 'tickMs'],
  ['tenantCacheTtlMs', 'cacheTtlMs', 'tenantCacheMs'],
  ['max', 'limit'],
  ['per', 'perMs', 'duration'],
];

/** Optimal string alignment distance (edits, adjacent swaps included), case-insensitive. */
function distance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const rows: number[][] = [];
  for (let i = 0; i <= s.length; i++) {
    rows.push([i]);
    for (let j = 1; j <= t.length; j++) {
      if (i === 0) {
        rows[i][j] = j;
        continue;
      }
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) {
        best = Math.min(best, rows[i - 2][j - 2] + 1);
      }
      rows[i][j] = best;
    }
  }
  return rows[s.length][t.length];
}

/** The known option an unknown name most likely means: a known alias, else within 2 edits. */
export function suggestOption(name: string, known: readonly string[]): string | undefined {
  const alias = ALIASES.find((group) => group.includes(name))?.find((n) => known.includes(n));
  if (alias !== undefined && alias !== name) return alias;
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of known) {
    const d = distance(name, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

/** Why an unknown option name is refused: with "did you mean X?" and the names allowed. */
export function unknownOptionWhy(name: string, known: readonly string[]): string {
  return Messages.unknownOption(suggestOption(name, known), known);
}

/** The first own key of `input` that `known` lacks. */
export function firstUnknownOption(input: object, known: readonly string[]): string | undefined {
  return Object.keys(input).find((key) => !known.includes(key));
}

/** The option names a class-validator schema declares. */
export function schemaOptionNames(schema: object): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(
    schema.constructor,
    '',
    true,
    false,
  );
  return [...new Set(metadata.map((m) => m.propertyName))];
}

/** Why class-validator refused a field (an unknown name gets its suggestion). */
export function validationWhy(error: ValidationError): string {
  if (error.constraints?.whitelistValidation !== undefined && error.target) {
    return unknownOptionWhy(error.property, schemaOptionNames(error.target));
  }
  return Object.values(error.constraints ?? {}).join('; ') || 'is not valid';
}

/** The option names two declarations of one thing give different values (deep comparison). */
export function differingOptions(earlier: object, later: object): string[] {
  const of = (options: object, key: string) => (options as Record<string, unknown>)[key];
  return [...new Set([...Object.keys(earlier), ...Object.keys(later)])].filter(
    (key) => !isDeepStrictEqual(of(earlier, key), of(later, key)),
  );
}
