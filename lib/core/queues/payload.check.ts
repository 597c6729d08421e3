import { InvalidPayloadError } from '../errors';
import { RUN_OPTIONS_KEY, runOptionsProblem } from '../envelope/job-run-options';
import { ENVELOPE_KEY } from '../../tenant-queue.constants';
import { Messages } from '../../tenant-queue.messages';

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Refuses a payload that is not a plain object, already carries `_tenant`, has a `toJSON` (it
 * would replace the whole payload, envelope included, when BullMQ serialises it) or invalid run
 * options under `_run` (the worker would dead-letter the job).
 */
export function assertPlainPayload(queue: string, name: string, data: unknown): void {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new InvalidPayloadError(Messages.invalidPayload(queue, name, 'is not an object'));
  }
  const proto = Object.getPrototypeOf(data);
  if (proto !== Object.prototype && proto !== null) {
    throw new InvalidPayloadError(Messages.invalidPayload(queue, name, 'is not a plain object'));
  }
  if (hasOwn.call(data, ENVELOPE_KEY)) {
    throw new InvalidPayloadError(
      Messages.invalidPayload(queue, name, `already has a "${ENVELOPE_KEY}" key`),
    );
  }
  if ((data as { toJSON?: unknown }).toJSON !== undefined) {
    throw new InvalidPayloadError(
      Messages.invalidPayload(
        queue,
        name,
        'has a "toJSON" key (it would replace the payload and its envelope when stored)',
      ),
    );
  }
  if (hasOwn.call(data, RUN_OPTIONS_KEY)) {
    const problem = runOptionsProblem((data as Record<string, unknown>)[RUN_OPTIONS_KEY]);
    if (problem) throw new InvalidPayloadError(Messages.invalidRunOptions(problem));
  }
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
