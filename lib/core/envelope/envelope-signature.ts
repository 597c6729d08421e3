import { createHmac, timingSafeEqual } from 'node:crypto';
import { TenantEnvelope } from '../types/tenant-envelope.interface';
import { ENVELOPE_FIELDS } from './tenant-envelope.dto';

/**
 * Signed in this order. `fairKey` came later: it is appended only when set, so an envelope
 * without one keeps the form (and the signature) it had before the field existed.
 */
const SIGNED_FIELDS = ENVELOPE_FIELDS.filter((field) => field !== 'sig' && field !== 'fairKey');
/** Binds a signature to this purpose and format, so it is never valid for anything else. */
const DOMAIN = 'nestjs-tenant-queue:envelope:v1';
const utf8 = new TextEncoder();

/**
 * The exact bytes that are signed: a JSON array of every field but `sig` in a fixed order, absent
 * fields as null. Independent of key order in Redis and of JSON whitespace.
 */
export function canonicalEnvelope(envelope: TenantEnvelope): string {
  const values: unknown[] = SIGNED_FIELDS.map((field) => envelope[field] ?? null);
  if (envelope.fairKey != null) values.push(envelope.fairKey);
  return JSON.stringify([DOMAIN, ...values]);
}

/** HMAC-SHA256 of the canonical form, base64url (43 characters). */
export function signEnvelope(envelope: TenantEnvelope, secret: string): string {
  return createHmac('sha256', secret).update(canonicalEnvelope(envelope)).digest('base64url');
}

/** True when `envelope.sig` was made by one of `secrets` over exactly these field values. */
export function verifyEnvelope(envelope: TenantEnvelope, secrets: readonly string[]): boolean {
  if (typeof envelope.sig !== 'string') return false;
  const given = utf8.encode(envelope.sig);
  let valid = false;
  for (const secret of secrets) {
    const expected = utf8.encode(signEnvelope(envelope, secret));
    // Every secret is tried, so the time taken does not tell which one matched.
    if (expected.length === given.length && timingSafeEqual(expected, given)) valid = true;
  }
  return valid;
}
