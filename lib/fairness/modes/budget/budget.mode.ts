import type { FairMode } from '../fair-mode.interface';

/**
 * `registerQueue({ budget })`: one budget across queues (fair-budget.lua, `cfg.bg` and `cfg.bn`).
 * Its option is the queue's, not `fairness`'s: checked with the queue (`checkBudget`).
 */
export const budgetMode: FairMode = {
  keys: [],
  resolve() {},
  script: (_options, { queue, budgetBase }) => (budgetBase ? { bg: budgetBase, bn: queue } : {}),
};
