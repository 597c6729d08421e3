import { Inject, Injectable } from '@nestjs/common';
import { validateSync } from 'class-validator';
import { InvalidEnvelopeError, InvalidTenantIdError } from '../errors';
import { TenantEnvelope } from '../types/tenant-envelope.interface';
import { ENVELOPE_KEY, ENVELOPE_VERSION, MAX_TENANT_ID_LENGTH } from '../../tenant-queue.constants';
import { Messages } from '../../tenant-queue.messages';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../options/core.options';
import { TenantState } from '../types/tenant-state.interface';
import { signEnvelope, verifyEnvelope } from './envelope-signature';
import { ENVELOPE_FIELDS, TenantEnvelopeDto } from './tenant-envelope.dto';
import { isEnvelopeShape } from './quick-check';
import { isTenantIdOf } from './tenant-id';

const hasOwn = Object.prototype.hasOwnProperty;

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
    if (typeof tenantId !== 'string' || !isTenantIdOf(this.options.tenantIdPattern, tenantId)) {
      throw new InvalidTenantIdError(
        Messages.invalidTenantId(tenantId, this.options.tenantIdPattern),
      );
    }
    if (tenantId.length > MAX_TENANT_ID_LENGTH) {
      throw new InvalidTenantIdError(Messages.tenantIdTooLong(tenantId, MAX_TENANT_ID_LENGTH));
    }
  }

  /** The envelope of a job enqueued in `state`; `fairKey` checked by the fairness feature first. */
  create(state: TenantState & { tenantId: string }, fairKey?: string): TenantEnvelope {
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
    if (fairKey !== undefined) envelope.fairKey = fairKey;
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

  /**
   * The envelope of a job as a worker would run it: the one its worker opened (`job.tenant`),
   * else its `_tenant` read back and opened. Undefined when it has none or `open` refuses it
   * (malformed, unsigned or forged), so a tenant id a worker would refuse is never taken as the
   * job's tenant (metrics, dead letters, the dashboard, DI resolution).
   */
  envelopeOf(job: { tenant?: unknown; data?: unknown }): TenantEnvelope | undefined {
    if (job.tenant) return job.tenant as TenantEnvelope;
    const data = job.data;
    const raw =
      data !== null && typeof data === 'object'
        ? (data as Record<string, unknown>)[ENVELOPE_KEY]
        : undefined;
    if (raw === undefined) return undefined;
    try {
      return this.open(raw);
    } catch {
      return undefined;
    }
  }

  /** The envelope itself when valid (the plain guard says yes); else a worded refusal. */
  private validate(raw: unknown): TenantEnvelope {
    if (isEnvelopeShape(raw) && isTenantIdOf(this.options.tenantIdPattern, raw.tenantId))
      return raw;
    throw this.refusal(raw);
  }

  /** Why `raw` is no envelope, in the DTO's words (`validateSync` runs only here). */
  private refusal(raw: unknown): InvalidEnvelopeError {
    const refuse = (why: string) => new InvalidEnvelopeError(Messages.invalidEnvelope(why));
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      return refuse('it is not an object');
    }
    const extra = Object.keys(raw).find((k) => !(ENVELOPE_FIELDS as string[]).includes(k));
    if (extra !== undefined || hasOwn.call(raw, '__proto__')) {
      return refuse(`unknown field "${extra ?? '__proto__'}"`);
    }
    const dto = Object.assign(new TenantEnvelopeDto(), raw);
    const [first] = validateSync(dto, { forbidUnknownValues: true });
    if (first) {
      // class-validator's messages start with the field's name ("actorType must be ...").
      const why = Object.values(first.constraints ?? {}).join('; ');
      return refuse(why || `${first.property} is invalid`);
    }
    if (
      typeof dto.tenantId === 'string' &&
      !isTenantIdOf(this.options.tenantIdPattern, dto.tenantId)
    ) {
      return refuse('tenantId does not match the pattern');
    }
    return refuse('it does not match the envelope schema');
  }
}
