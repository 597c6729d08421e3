import { InvalidPayloadError } from '../errors';
import { RUN_OPTIONS_KEY, runOptionsProblem } from '../envelope/job-run-options';
import { ENVELOPE_KEY } from '../../tenant-queue.constants';
import { Messages } from '../../tenant-queue.messages';

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * The payload's one plain copy, the object that is checked and stored: refuses a payload that is
 * not a plain object, already carries `_tenant`, has a `toJSON` (it would replace the whole
 * payload, envelope included, when BullMQ serialises it) or invalid run options under `_run`
 * (the worker would dead-letter the job). The checks read the copy, never the caller's object, so
 * a Proxy or a getter cannot show them one payload and the store another.
 */
export function plainPayloadCopy(
  queue: string,
  name: string,
  data: unknown,
): Record<string, unknown> {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new InvalidPayloadError(Messages.invalidPayload(queue, name, 'is not an object'));
  }
  const proto = Object.getPrototypeOf(data);
  if (proto !== Object.prototype && proto !== null) {
    throw new InvalidPayloadError(Messages.invalidPayload(queue, name, 'is not a plain object'));
  }
  const copy: Record<string, unknown> = { ...(data as Record<string, unknown>) };
  if (hasOwn.call(copy, ENVELOPE_KEY)) {
    throw new InvalidPayloadError(
      Messages.invalidPayload(queue, name, `already has a "${ENVELOPE_KEY}" key`),
    );
  }
  if (copy.toJSON !== undefined) {
    throw new InvalidPayloadError(
      Messages.invalidPayload(
        queue,
        name,
        'has a "toJSON" key (it would replace the payload and its envelope when stored)',
      ),
    );
  }
  if (hasOwn.call(copy, RUN_OPTIONS_KEY)) {
    // Its own plain copy too: the worker reads these options, so a getter in them must not show
    // the check one value and the store another.
    const run = copy[RUN_OPTIONS_KEY];
    if (run !== null && typeof run === 'object' && !Array.isArray(run)) {
      copy[RUN_OPTIONS_KEY] = { ...(run as Record<string, unknown>) };
    }
    const problem = runOptionsProblem(copy[RUN_OPTIONS_KEY]);
    if (problem) throw new InvalidPayloadError(Messages.invalidRunOptions(problem));
  }
  return copy;
}

/** The payload as BullMQ will store it; refuses what JSON cannot hold (BigInt, cycles). */
export function payloadJson(queue: string, name: string, payload: object): string {
  try {
    return JSON.stringify(payload);
  } catch (error) {
    throw new InvalidPayloadError(
      Messages.invalidPayload(
        queue,
        name,
        `cannot be stored as JSON (${(error as Error).message})`,
      ),
    );
  }
}
