import { unknownOptionWhy } from '../core/options/option-names';
import type { NumberRule, Refuse } from './modes/fair-mode.interface';

/**
 * Checks the names and numbers of one object of `fairness` options (`path`: '' for the root,
 * 'slowLane.' below it): a name not in `known` is refused naming the closest and listing
 * `known`, then each rule's number (type and range).
 */
export function checkOptions(
  input: object,
  path: string,
  known: readonly string[],
  rules: readonly NumberRule[],
  refuse: Refuse,
): void {
  for (const key of Object.keys(input)) {
    if (!known.includes(key)) throw refuse(`${path}${key}`, unknownOptionWhy(key, known));
  }
  for (const [key, min, integer, max] of rules) {
    const value = (input as Record<string, unknown>)[key];
    if (value === undefined) continue;
    const ok =
      typeof value === 'number' &&
      Number.isFinite(value) &&
      value >= min &&
      (max === undefined || value <= max) &&
      (!integer || Number.isInteger(value));
    if (!ok) {
      const range = `${integer ? 'an integer' : 'a number'} ${min === Number.MIN_VALUE ? '> 0' : `>= ${min}`}${max === undefined ? '' : ` and <= ${max}`}`;
      throw refuse(`${path}${key}`, `must be ${range}`);
    }
  }
}
