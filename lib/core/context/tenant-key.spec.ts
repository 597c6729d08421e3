import Redis from 'ioredis';
import { TENANT_KEY_PART_LUA, tenantFromKeyPart, tenantKeyPart } from './tenant-key';

const HOSTILE = [
  'acme',
  'q',
  'q:entries',
  'a:b:c',
  '{tag}',
  'a}{b',
  '100%',
  '%3A',
  'with space',
  'tab\there',
  'line\nbreak',
  'ünïcødé-租户',
  'x'.repeat(64),
  '__proto__',
  'constructor',
  '*',
  '',
];

describe('tenantKeyPart', () => {
  it('leaves ids of the default pattern unchanged', () => {
    for (const id of ['acme', 'Globex-2', 'a.b_c', 'x'.repeat(64)]) {
      expect(tenantKeyPart(id)).toBe(id);
    }
  });

  it('never yields a separator, a brace or a space, and is one-to-one', () => {
    const seen = new Map<string, string>();
    for (const id of HOSTILE) {
      const part = tenantKeyPart(id);
      expect(part).not.toMatch(/[:{}\s]/);
      expect(tenantFromKeyPart(part)).toBe(id);
      expect(seen.get(part)).toBeUndefined();
      seen.set(part, id);
    }
    // A segment plus a suffix never equals another id's segment.
    expect(tenantKeyPart('q') + ':entries').not.toBe(tenantKeyPart('q:entries'));
  });
});

const redisUrl = process.env.REDIS_URL;
(redisUrl ? describe : describe.skip)('TENANT_KEY_PART_LUA', () => {
  it('escapes exactly as tenantKeyPart does', async () => {
    const redis = new Redis(redisUrl!, { lazyConnect: true });
    await redis.connect();
    try {
      for (const id of HOSTILE) {
        const fromLua = await redis.eval(`${TENANT_KEY_PART_LUA}\nreturn tkp(ARGV[1])`, 0, id);
        expect(fromLua).toBe(tenantKeyPart(id));
      }
    } finally {
      redis.disconnect();
    }
  });
});
