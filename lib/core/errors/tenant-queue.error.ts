/**
 * Base class of every error this module throws on purpose.
 * @publicApi
 */
export class TenantQueueError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
