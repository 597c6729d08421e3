/** The dead letters' slice of `registerQueue`'s options. */
export interface DeadLetterQueueOptions {
  /**
   * Most dead letters kept per tenant on this queue; the oldest are dropped beyond it.
   * @default 1000
   */
  deadLetterCap?: number;
}

/** `deadLetterCap`'s default. */
export const DEFAULT_DEAD_LETTER_CAP = 1000;
