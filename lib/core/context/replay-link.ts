import { ClsServiceManager } from 'nestjs-cls';

/**
 * @internal CLS key of a dead-letter replay's context: the W3C `traceparent` of the job it
 * replays, for the dispatcher that writes the replay (telemetry) to link its span to. Held in
 * the replay's own context only, never written to Redis.
 */
const REPLAY_LINK = Symbol('tenant-queue:replay-link');

/** @internal Marks what the current (fresh) context enqueues as a replay of `traceparent`. */
export function setReplayLink(traceparent: string | undefined): void {
  if (traceparent !== undefined) ClsServiceManager.getClsService().set(REPLAY_LINK, traceparent);
}

/** @internal The traceparent a replay enqueued in this context links to, if any. */
export function replayLink(): string | undefined {
  const cls = ClsServiceManager.getClsService();
  return cls.isActive() ? cls.get<string | undefined>(REPLAY_LINK) : undefined;
}
