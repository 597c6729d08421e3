import type { TenantFairnessOptions } from '../tenant-fairness-options.interface';
import type { ResolvedFairnessOptions } from '../fairness-options';

/** A numeric option: its name, its minimum, whether it is an integer, its maximum. */
export type NumberRule = [key: string, min: number, integer: boolean, max?: number];

/** The typed refusal of one field of `registerQueue(<queue>).fairness` (`field` below it). */
export type Refuse = (field: string, why: string) => Error;

/** What a mode's script config may read besides the options. */
export interface FairModeContext {
  queue: string;
  /** Base of the queue's budget's shared keys; absent without a budget. */
  budgetBase?: string;
}

/**
 * One mode of the fair gate (lanes, rate limit, slow lane, ...): its options, their checks and
 * defaults, and what it adds to the gate scripts' config. Its Lua sits beside it in its folder
 * and is included by the scripts that use it. A new mode is a folder and an entry in
 * `FAIR_MODES` (modes/index.ts).
 */
export interface FairMode {
  /** Its options at the root of `fairness` (any other name is refused as unknown). */
  readonly keys: readonly string[];
  /** Its numeric options, checked with the others' (type and range). */
  readonly rules?: readonly NumberRule[];
  /**
   * Checks its options (after every name and number is checked) and writes what they resolve
   * to, defaults filled in, into `resolved`. Throws `refuse(field, why)`.
   */
  resolve(input: TenantFairnessOptions, resolved: ResolvedFairnessOptions, refuse: Refuse): void;
  /** What it adds to the gate scripts' config (fields of `cfg`, see fair-keys.lua); none: `{}`. */
  script(options: ResolvedFairnessOptions, context: FairModeContext): object;
}
