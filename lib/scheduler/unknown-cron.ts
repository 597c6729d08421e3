import { DelayedError, Job } from 'bullmq';

/**
 * How long after a `@TenantCron` job was added an instance that does not declare that cron hands
 * the job back to BullMQ for another instance: a rolling deploy that adds a cron runs the old
 * version beside the new one for about this long, and the old one's workers take its jobs too.
 */
export const UNKNOWN_CRON_HAND_BACK_MS = 10 * 60_000;
/** When a handed-back job is due again (no attempt used). */
const HAND_BACK_DELAY_MS = 100;

/**
 * A job of a `@TenantCron` this app does not declare (a newer version's, during a rolling deploy):
 * within `UNKNOWN_CRON_HAND_BACK_MS` of its add, moved back to BullMQ's delayed set for an instance
 * that declares it, and the attempt ends there (BullMQ's `DelayedError`: no attempt used, no
 * failure). Returns past that window, for the caller to give the job up as it says.
 */
export async function handBackUnknownCron(job: Job, token: string | undefined): Promise<void> {
  if (Date.now() - job.timestamp > UNKNOWN_CRON_HAND_BACK_MS) return;
  await job.moveToDelayed(Date.now() + HAND_BACK_DELAY_MS, token);
  throw new DelayedError();
}
