import { IsOptional, ValidateBy, validateSync } from 'class-validator';
import { InvalidTenantQueueOptionsError } from '../errors';
import { TenantEnvelopeOptions } from '../types/core-options.interface';
import { Messages } from '../../tenant-queue.messages';
import { validationWhy } from './option-names';

/** `envelope` option after validation: no secrets means signing is off. */
export interface ResolvedEnvelopeOptions {
  secrets: readonly string[];
}

export const MIN_SECRET_LENGTH = 32;

const isSecret = (value: unknown) => typeof value === 'string' && value.length >= MIN_SECRET_LENGTH;

class EnvelopeSchema {
  @IsOptional()
  @ValidateBy({
    name: 'isSecretList',
    validator: {
      validate: (value) =>
        isSecret(value) || (Array.isArray(value) && value.length > 0 && value.every(isSecret)),
      defaultMessage: () =>
        `must be a string of at least ${MIN_SECRET_LENGTH} characters, or a non-empty list of them`,
    },
  })
  secret?: unknown;
}

export function resolveEnvelopeOptions(
  input: TenantEnvelopeOptions | undefined,
): ResolvedEnvelopeOptions {
  if (input === undefined) return { secrets: [] };
  const errors =
    input === null || typeof input !== 'object'
      ? null
      : validateSync(Object.assign(new EnvelopeSchema(), input), {
          whitelist: true,
          forbidNonWhitelisted: true,
        });
  if (errors === null) {
    throw new InvalidTenantQueueOptionsError(
      Messages.invalidOptions('envelope', 'must be an object'),
    );
  }
  if (errors.length > 0) {
    throw new InvalidTenantQueueOptionsError(
      Messages.invalidOptions(`envelope.${errors[0].property}`, validationWhy(errors[0])),
    );
  }
  const secret = input.secret;
  return { secrets: secret === undefined ? [] : Array.isArray(secret) ? [...secret] : [secret] };
}
