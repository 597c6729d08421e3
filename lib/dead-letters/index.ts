export * from './dead-letter.interface';
export * from './dead-letters.service';
export * from './dead-letter-not-found.error';
export * from './invalid-dead-letter-query.error';
export type { DeadLetterQueueOptions } from './dead-letter-queue-options.interface';
// @internal: for the inspector's dead-letter counts.
export { DeadLettersScript } from './dead-letters.script';
export * from './dead-letter-resolved.error';
// @internal: its check of `deadLetterCap`, which the testing module runs too.
export { DeadLetterQueueFeature } from './dead-letter-queue.feature';
