/**
 * A tenant entered or left the slow lane of a fair queue (emitted by the process that saw it).
 * @publicApi
 */
export interface SlowLaneEvent {
  queue: string;
  tenantId: string;
  /** Final failures within the sliding window when the change happened. */
  failures: number;
  state: 'entered' | 'left';
}
