/** A fair queue's fields of each job's options: checked by `FairQueueFeature.jobCheckFor`. */
export interface FairJobOptions {
  /** Lane of the job on a queue with `fairness.lanes` (e.g. `'interactive'`, `'bulk'`). */
  lane?: string;
  /**
   * Second fairness key, inside the tenant, on a queue with `fairness.fairKey` (e.g. the user
   * id): the tenant's turns go round its keys, so one user's flood does not starve the tenant's
   * other users. 1-128 printable ASCII characters (no spaces); it travels in the signed
   * `_tenant` envelope. A job without a tenant cannot have one.
   */
  fairKey?: string;
}

declare module '../core/queues/job-dispatcher.interface' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merges the slice in
  interface TenantJobOptions extends FairJobOptions {}
}
