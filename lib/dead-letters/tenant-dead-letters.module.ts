import { Module } from '@nestjs/common';
import { DeadLetterWorkerPlugin } from './dead-letter.plugin';
import { DeadLetterQueueFeature } from './dead-letter-queue.feature';
import { DeadLetters } from './dead-letters.service';

/** Per-tenant dead letters of every queue (`registerQueue({ deadLetterCap })`), and replay. */
@Module({
  providers: [DeadLetters, DeadLetterWorkerPlugin, DeadLetterQueueFeature],
  exports: [DeadLetters],
})
export class TenantDeadLettersModule {}
