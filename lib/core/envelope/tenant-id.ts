/** A UTF-16 surrogate without its other half: no UTF-8 (Redis, JSON, Lua) can carry it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether `value` is a tenant id of `pattern`: it matches, and it is well-formed Unicode. A
 * pattern such as `/^[\s\S]{1,64}$/` also admits a lone surrogate (`"a\uD800"`), which Redis
 * stores as U+FFFD: two such ids would share every key, and a fair queue's script refuses it.
 */
export function isTenantIdOf(pattern: RegExp, value: string): boolean {
  return pattern.test(value) && !LONE_SURROGATE.test(value);
}
