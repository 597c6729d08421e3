import { TenantPortUnavailableError } from '../core/errors';
import { Messages } from '../tenant-queue.messages';

/**
 * Calls an application port with a deadline. A throw or a timeout becomes
 * `TenantPortUnavailableError` (transient: the job is retried), never a denial.
 */
export async function callPort<T>(
  port: string,
  timeoutMs: number,
  call: () => Promise<T>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new TenantPortUnavailableError(Messages.portTimedOut(port, timeoutMs))),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([Promise.resolve().then(call), deadline]);
  } catch (error) {
    if (error instanceof TenantPortUnavailableError) throw error;
    const why = error instanceof Error ? error.message : String(error);
    throw new TenantPortUnavailableError(Messages.portUnavailable(port, why), { cause: error });
  } finally {
    clearTimeout(timer);
  }
}
