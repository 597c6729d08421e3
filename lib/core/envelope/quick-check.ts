import { ACTOR_TYPES } from '../types/actor.interface';
import { TenantEnvelope } from '../types/tenant-envelope.interface';
import { LOCALE, SIGNATURE, STRATEGIES, TRACEPARENT } from './tenant-envelope.dto';

const hasOwn = Object.prototype.hasOwnProperty;
const V = 1;
const TENANT_ID = 2;
const ACTOR_TYPE = 4;
const ENQUEUED_AT = 8;
const CORRELATION_ID = 16;
const REQUIRED = V | TENANT_ID | ACTOR_TYPE | ENQUEUED_AT | CORRELATION_ID;

/**
 * The envelope check of the hot path (every enqueue, every job): a plain type guard with the
 * rules of `TenantEnvelopeDto` written out (types, lengths, patterns, known fields only), about
 * ten times cheaper than calling class-validator's constraints. "No" sends the caller to
 * `validateSync` on the DTO, which words the refusal; a test checks the two agree on every field.
 * The tenant id pattern is the caller's (it is configurable).
 */
export function isEnvelopeShape(raw: unknown): raw is TenantEnvelope {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return false;
  const envelope = raw as Record<string, unknown>;
  let seen = 0;
  for (const key in envelope) {
    // An inherited enumerable key (a polluted prototype) is no envelope field either.
    if (!hasOwn.call(envelope, key)) return false;
    const value = envelope[key];
    switch (key) {
      case 'v':
        if (value !== 1) return false;
        seen |= V;
        break;
      case 'tenantId':
        if (typeof value !== 'string' || !lengthWithin(value, 1, 64)) return false;
        seen |= TENANT_ID;
        break;
      case 'actorType':
        if (!(ACTOR_TYPES as unknown[]).includes(value)) return false;
        seen |= ACTOR_TYPE;
        break;
      case 'enqueuedAt':
        if (!isUtcInstant(value)) return false;
        seen |= ENQUEUED_AT;
        break;
      case 'correlationId':
        if (!isSafeText(value, 128)) return false;
        seen |= CORRELATION_ID;
        break;
      // Optional fields: absent, undefined or null are all "not set", as with `@IsOptional`.
      case 'actorId':
      case 'fairKey':
        if (value != null && !isSafeText(value, 128)) return false;
        break;
      case 'environment':
        if (value != null && !isSafeText(value, 32)) return false;
        break;
      case 'locale':
        if (value != null && !(typeof value === 'string' && LOCALE.test(value))) return false;
        break;
      case 'strategy':
        if (value != null && !(STRATEGIES as unknown[]).includes(value)) return false;
        break;
      case 'traceparent':
        if (value != null && !(typeof value === 'string' && TRACEPARENT.test(value))) return false;
        break;
      case 'sig':
        if (value != null && !(typeof value === 'string' && SIGNATURE.test(value))) return false;
        break;
      default:
        return false;
    }
  }
  return seen === REQUIRED;
}

/** 1 to `max` printable ASCII characters (`SAFE_TEXT` of the DTO). */
export function isSafeText(value: unknown, max: number): boolean {
  if (typeof value !== 'string' || value.length === 0 || value.length > max) return false;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x21 || code > 0x7e) return false;
  }
  return true;
}

/**
 * class-validator's `@Length` (validator.js `isLength`): a surrogate pair counts as one
 * character, and so does a character followed by a variation selector (U+FE0E, U+FE0F).
 */
function lengthWithin(value: string, min: number, max: number): boolean {
  // Each pair folds 2 code units into 1, at most two pairs overlap: length >= value.length / 3.
  if (value.length > 3 * max) return false;
  let length = value.length;
  for (let i = 0; i < value.length - 1; i++) {
    const code = value.charCodeAt(i);
    const following = value.charCodeAt(i + 1);
    if (code !== 0xfe0e && code !== 0xfe0f && (following === 0xfe0e || following === 0xfe0f)) {
      length--;
      i++;
    }
  }
  for (let i = 0; i < value.length - 1; i++) {
    const code = value.charCodeAt(i);
    const following = value.charCodeAt(i + 1);
    if (code >= 0xd800 && code <= 0xdbff && following >= 0xdc00 && following <= 0xdfff) {
      length--;
      i++;
    }
  }
  return length >= min && length <= max;
}

/**
 * A UTC instant as `Date.prototype.toISOString()` writes it (`2026-11-30T23:00:00.123Z`, the
 * fraction optional, 1-3 digits) that names a real moment: month 1-12, a day the month has,
 * hours 0-23.
 */
export function isUtcInstant(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const length = value.length;
  if (length !== 20 && (length < 22 || length > 24)) return false;
  if (
    value.charCodeAt(4) !== 0x2d || // -
    value.charCodeAt(7) !== 0x2d ||
    value.charCodeAt(10) !== 0x54 || // T
    value.charCodeAt(13) !== 0x3a || // :
    value.charCodeAt(16) !== 0x3a ||
    value.charCodeAt(length - 1) !== 0x5a // Z
  ) {
    return false;
  }
  if (length > 20 && value.charCodeAt(19) !== 0x2e) return false; // .
  for (let i = 20; i < length - 1; i++) if (digit(value, i) < 0) return false;
  const year = number(value, 0, 4);
  const month = number(value, 5, 2);
  const day = number(value, 8, 2);
  const hour = number(value, 11, 2);
  const minute = number(value, 14, 2);
  const second = number(value, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23) return false;
  if (minute < 0 || minute > 59 || second < 0 || second > 59) return false;
  return day <= daysIn(year, month);
}

function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** The decimal number of `width` digits at `at`, or -1 when one is not a digit. */
function number(value: string, at: number, width: number): number {
  let result = 0;
  for (let i = at; i < at + width; i++) {
    const d = digit(value, i);
    if (d < 0) return -1;
    result = result * 10 + d;
  }
  return result;
}

function digit(value: string, at: number): number {
  const code = value.charCodeAt(at) - 0x30;
  return code >= 0 && code <= 9 ? code : -1;
}
