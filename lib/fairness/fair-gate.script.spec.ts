import Redis from 'ioredis';
import { composeLua, shakeLua } from '../core/redis/lua-includes';
import { FAIR_LUA_DIR, FAIR_SCRIPT_SPECS } from './fair-gate.script';
import { FAIR_READ_SPECS } from './fair-explain';

const COMMANDS = { ...FAIR_SCRIPT_SPECS, ...FAIR_READ_SPECS };
const compose = (name: keyof typeof COMMANDS) => composeLua(FAIR_LUA_DIR, COMMANDS[name].file);

/** Each part of the gate by a local it defines (each defined in that part only). */
const PARTS: Record<string, string> = {
  keys: 'local function tKey(',
  budget: 'local function budgetLoad(',
  tenants: 'local function loadTenants(',
  timeShare: 'local function chargeTurns(',
  floors: 'local function floorPicks(',
  fairKeys: 'local function takeKeyed(',
  bull: 'local function moveIntoBull(',
  dispatch: 'local function dispatchOnce(',
  settle: 'local function releaseMany(',
};
const ORDER = Object.keys(PARTS);
const partsOf = (lua: string) =>
  ORDER.filter((part) => lua.includes(PARTS[part])).sort(
    (a, b) => lua.indexOf(PARTS[a]) - lua.indexOf(PARTS[b]),
  );

describe('fair gate scripts', () => {
  it.each(['tqFairEnqueue', 'tqFairRelease', 'tqFairTick', 'tqFairAdmin'] as const)(
    '%s gets every part of the gate, each once, its dependencies first',
    (name) => {
      const lua = compose(name);
      expect(partsOf(lua)).toEqual(ORDER);
      for (const marker of Object.values(PARTS)) expect(lua.split(marker)).toHaveLength(2);
      expect(lua).not.toMatch(/^---\s*@include/m);
    },
  );

  it('gives the read-only scripts no dispatch, settle, time share or floors', () => {
    expect(partsOf(compose('tqFairExplain'))).toEqual([
      'keys',
      'budget',
      'tenants',
      'fairKeys',
      'bull',
    ]);
    expect(partsOf(compose('tqFairGateJobs'))).toEqual(['keys', 'budget', 'tenants', 'fairKeys']);
  });

  const redisUrl = process.env.REDIS_URL;
  (redisUrl ? it : it.skip)('loads every composed script into Redis (SCRIPT LOAD)', async () => {
    const redis = new Redis(redisUrl!, { lazyConnect: true });
    await redis.connect();
    try {
      for (const name of Object.keys(COMMANDS) as (keyof typeof COMMANDS)[]) {
        const composed = compose(name);
        await expect(redis.script('LOAD', composed)).resolves.toMatch(/^[0-9a-f]{40}$/);
        // What the loader defines: the command without the functions it does not name.
        const shaken = shakeLua(composed);
        expect(shaken.length).toBeLessThan(composed.length);
        await expect(redis.script('LOAD', shaken)).resolves.toMatch(/^[0-9a-f]{40}$/);
      }
    } finally {
      redis.disconnect();
    }
  });
});
