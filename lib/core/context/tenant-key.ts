/**
 * The rule for every Redis key built from a tenant id: the id is one key segment, written with
 * `tenantKeyPart`. It escapes `%`, `:`, `{`, `}`, space and ASCII control characters as `%XX`
 * (UTF-8, as `encodeURIComponent` writes them), so no id can end a segment early, look like
 * another id's key (`q` + `:entries` vs `q:entries`) or open a Redis Cluster hash tag. Ids of the
 * default pattern contain none of these and are written unchanged.
 *
 * Lua scripts that build the same keys use the same escape (see `TENANT_KEY_PART_LUA`), so a key
 * built here and one built in a script always agree.
 */
const UNSAFE_TEST = /[%:{}\x00-\x20\x7f]/;
const UNSAFE = /[%:{}\x00-\x20\x7f]/g;
export function tenantKeyPart(tenantId: string): string {
  return UNSAFE_TEST.test(tenantId) ? tenantId.replace(UNSAFE, escapeChar) : tenantId;
}

/** The inverse of `tenantKeyPart` (for ids read back out of a key name). */
export function tenantFromKeyPart(part: string): string {
  return part.includes('%') ? decodeURIComponent(part) : part;
}

function escapeChar(char: string): string {
  return '%' + char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0');
}

/**
 * The same escape in Lua 5.1 (bytes; every escaped character is ASCII, so byte = code unit):
 * paste into a script's prelude and build tenant key segments with `tkp(t)`.
 */
export const TENANT_KEY_PART_LUA = `local function tkp(t)
  if not string.find(t, '[%%:{}%z\\1-\\32\\127]') then return t end
  return (string.gsub(t, '[%%:{}%z\\1-\\32\\127]', function(c) return string.format('%%%02X', string.byte(c)) end))
end`;
