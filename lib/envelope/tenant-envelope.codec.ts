import { Inject, Injectable } from '@nestjs/common';
import { validateSync } from 'class-validator';
import { InvalidEnvelopeError, InvalidTenantIdError } from '../errors';
import { TenantEnvelope } from '../interfaces/tenant-envelope.interface';
import { ENVELOPE_VERSION, MAX_TENANT_ID_LENGTH } from '../tenant-queue.constants';
import { Messages } from '../tenant-queue.messages';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../tenant-queue.options';
import { TenantState } from '../context/tenant-state';
import { signEnvelope, verifyEnvelope } from './envelope-signature';
import { ENVELOPE_FIELDS, TenantEnvelopeDto } from './tenant-envelope.dto';
import { compileQuickCheck } from './quick-check';

const hasOwn = Object.prototype.hasOwnProperty;

/** The DTO's decorators as one quick yes/no; `validateSync` runs only when it says no. */
const quickCheck = compileQuickCheck(TenantEnvelopeDto);

/** Builds envelopes from the tenant context and opens (validates) envelopes read from Redis. */
@Injectable()
export class TenantEnvelopeCodec {
  constructor(
    @Inject(TENANT_QUEUE_OPTIONS)
    private readonly options: ResolvedTenantQueueOptions,
  ) {}

  /**
   * Throws `InvalidTenantIdError` when the id does not match the configured pattern or is longer
   * than `MAX_TENANT_ID_LENGTH` (the envelope's limit, whatever the pattern admits).
   */
  assertTenantId(tenantId: unknown): asserts tenantId is string {
    if (typeof tenantId !== 'string' || !this.options.tenantIdPattern.test(tenantId)) {
      throw new InvalidTenantIdError(
        Messages.invalidTenantId(tenantId, this.options.tenantIdPattern),
      );
    }
    if (tenantId.length > MAX_TENANT_ID_LENGTH) {
      throw new InvalidTenantIdError(Messages.tenantIdTooLong(tenantId, MAX_TENANT_ID_LENGTH));
    }
  }

  create(state: TenantState & { tenantId: string }): TenantEnvelope {
    const envelope: TenantEnvelope = {
      v: ENVELOPE_VERSION,
      tenantId: state.tenantId,
      actorType: state.actor?.type ?? 'system',
      enqueuedAt: new Date().toISOString(),
      correlationId: state.correlationId ?? this.options.newCorrelationId(),
    };
    if (state.actor?.id !== undefined) envelope.actorId = state.actor.id;
    if (state.locale !== undefined) envelope.locale = state.locale;
    const environment = state.environment ?? this.options.environment;
    if (environment !== undefined) envelope.environment = environment;
    if (state.strategy !== undefined) envelope.strategy = state.strategy;
    if (state.traceparent !== undefined) envelope.traceparent = state.traceparent;
    const valid = this.validate(envelope);
    const [secret] = this.options.envelope.secrets;
    if (secret !== undefined) valid.sig = signEnvelope(valid, secret);
    return valid;
  }

  /**
   * Validates an envelope as read from a job. Unknown fields, `__proto__` keys, wrong types,
   * oversize strings and tenant ids off-pattern all throw `InvalidEnvelopeError`; so do, when
   * `envelope.secret` is set, a missing signature or one that matches none of the secrets.
   */
  open(raw: unknown): TenantEnvelope {
    const envelope = this.validate(raw);
    const secrets = this.options.envelope.secrets;
    if (secrets.length === 0) return envelope;
    if (envelope.sig === undefined) {
      throw new InvalidEnvelopeError(Messages.invalidEnvelope(Messages.unsignedEnvelope()));
    }
    if (!verifyEnvelope(envelope, secrets)) {
      throw new InvalidEnvelopeError(Messages.invalidEnvelope(Messages.badSignature()));
    }
    return envelope;
  }

  private validate(raw: unknown): TenantEnvelope {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      throw new InvalidEnvelopeError(Messages.invalidEnvelope('it is not an object'));
    }
    const dto = new TenantEnvelopeDto();
    const target = dto as unknown as Record<string, unknown>;
    let known = 0;
    for (const field of ENVELOPE_FIELDS) {
      if (hasOwn.call(raw, field)) {
        target[field] = (raw as Record<string, unknown>)[field];
        known++;
      }
    }
    if (known !== Object.keys(raw).length || hasOwn.call(raw, '__proto__')) {
      const extra = Object.keys(raw).find((k) => !(ENVELOPE_FIELDS as string[]).includes(k));
      throw new InvalidEnvelopeError(
        Messages.invalidEnvelope(`unknown field "${extra ?? '__proto__'}"`),
      );
    }
    const errors = quickCheck?.(dto) ? [] : validateSync(dto, { forbidUnknownValues: true });
    if (errors.length > 0) {
      const first = errors[0];
      throw new InvalidEnvelopeError(
        Messages.invalidEnvelope(
          `${first.property} ${Object.values(first.constraints ?? {}).join('; ')}`,
        ),
      );
    }
    if (!this.options.tenantIdPattern.test(dto.tenantId)) {
      throw new InvalidEnvelopeError(
        Messages.invalidEnvelope('tenantId does not match the pattern'),
      );
    }
    return { ...dto };
  }
}
