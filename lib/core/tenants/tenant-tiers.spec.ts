import { TenantEnvelopeCodec } from '../envelope/tenant-envelope.codec';
import { Logger } from '@nestjs/common';
import { InvalidTenantQueueOptionsError } from '../errors';
import { UnknownTierError } from './unknown-tier.error';
import { TenantDirectory, TenantPage, TenantRecord } from '../types/tenant-directory.interface';
import { resolveTenantQueueOptions } from '../options/core.options';
import { TenantTiers } from './tenant-tiers.service';

/** A directory of records kept here (the kernel's specs use nothing from the features). */
class InMemoryTenantDirectory implements TenantDirectory {
  private readonly records = new Map<string, TenantRecord>();

  constructor(records: (Partial<TenantRecord> & { id: string })[]) {
    for (const record of records) this.upsert(record);
  }

  upsert(record: Partial<TenantRecord> & { id: string }): void {
    this.records.set(record.id, { status: 'active', ...record } as TenantRecord);
  }

  async getTenant(tenantId: string): Promise<TenantRecord | null> {
    return this.records.get(tenantId) ?? null;
  }

  async listActiveTenants(): Promise<TenantPage> {
    return { tenants: [...this.records.values()], nextCursor: null };
  }
}

const tiersFor = (
  tiers: object,
  directory = new InMemoryTenantDirectory([]),
  tierCacheMs = 30_000,
) => {
  const options = resolveTenantQueueOptions({ connection: {}, tiers, tierCacheMs } as never);
  return new TenantTiers(options, NO_REDIS, new TenantEnvelopeCodec(options), directory);
};

/** No Redis behind it: run-time tier assignments stay in the process (as under the testing module). */
const NO_REDIS = { stateClient: () => undefined } as never;

describe('TenantTiers', () => {
  it('never takes a tier, queue or pool from Object.prototype', async () => {
    const directory = new InMemoryTenantDirectory([
      { id: 'constructor', tier: 'constructor' },
      { id: 'toString', tier: 'pro' },
    ]);
    const tiers = tiersFor({ pro: { weight: 2 } }, directory);
    const odd = await tiers.profile('constructor');
    expect(tiers.tier(odd.tier)).toBeUndefined();
    expect(tiers.limits(odd, 'constructor')).toEqual({});
    expect(tiers.pool(odd, 'constructor')).toBeUndefined();
    const pro = await tiers.profile('toString');
    expect(tiers.limits(pro, 'toString')).toEqual({ weight: 2 });
    expect(tiers.pool(pro, 'hasOwnProperty')).toBeUndefined();
  });

  it('layers tier, tier per-queue entry and the tenant record, in that order', async () => {
    const directory = new InMemoryTenantDirectory([
      { id: 'a', tier: 'pro' },
      { id: 'b', tier: 'pro', weight: 7, rateLimit: false },
      { id: 'c' },
    ]);
    const tiers = tiersFor(
      {
        pro: {
          weight: 3,
          maxConcurrency: 2,
          rateLimit: { max: 10, per: 1000 },
          queues: { exports: { maxConcurrency: 5, lanes: { bulk: 2 } } },
          pools: { imports: 'imports-pro' },
        },
      },
      directory,
    );
    const a = await tiers.profile('a');
    expect(tiers.limits(a, 'exports')).toEqual({
      weight: 3,
      maxConcurrency: 5,
      rateLimit: { max: 10, per: 1000 },
      lanes: { bulk: 2 },
    });
    expect(tiers.limits(a, 'other')).toEqual({
      weight: 3,
      maxConcurrency: 2,
      rateLimit: { max: 10, per: 1000 },
    });
    expect(tiers.pool(a, 'imports')).toBe('imports-pro');
    expect(tiers.pool(a, 'exports')).toBeUndefined();
    const b = await tiers.profile('b');
    expect(tiers.limits(b, 'other')).toMatchObject({ weight: 7, rateLimit: false });
    expect(tiers.limits(await tiers.profile('c'), 'other')).toEqual({});
  });

  it('caches profiles for tierCacheMs and forgets one on refresh, telling listeners', async () => {
    const directory = new InMemoryTenantDirectory([{ id: 'a', tier: 'free' }]);
    const tiers = tiersFor({ free: {}, pro: {} }, directory);
    expect((await tiers.profile('a')).tier).toBe('free');
    directory.upsert({ id: 'a', tier: 'pro' });
    expect((await tiers.profile('a')).tier).toBe('free');
    const told: string[] = [];
    const off = tiers.onRefresh((tenantId) => {
      told.push(tenantId);
    });
    await tiers.refresh('a');
    expect(told).toEqual(['a']);
    expect((await tiers.profile('a')).tier).toBe('pro');
    off();
  });

  it.each([
    [{ free: { weight: 0 } }, 'tiers.free.weight'],
    [{ free: { maxConcurrency: 1.5 } }, 'tiers.free.maxConcurrency'],
    [{ free: { rateLimit: { max: 5 } } }, 'tiers.free.rateLimit.per'],
    [{ free: { rateLimit: { max: 5, per: 1000, burst: 0 } } }, 'tiers.free.rateLimit.burst'],
    [{ free: { lanes: { bulk: -1 } } }, 'tiers.free.lanes.bulk'],
    [{ free: { queues: { q: { pools: {} } } } }, 'tiers.free.queues.q.pools'],
    [{ free: { pools: { q: '' } } }, 'tiers.free.pools.q'],
    [{ free: { colour: 'red' } }, 'tiers.free.colour'],
    [{ 'bad name': {} }, 'tiers.bad name'],
  ])('refuses %j naming %s', (tiers, field) => {
    expect(() => tiersFor(tiers)).toThrow(InvalidTenantQueueOptionsError);
    expect(() => tiersFor(tiers)).toThrow(`"${field}"`);
  });

  it('assigns a tier at run time over the record, and goes back to it with null', async () => {
    const directory = new InMemoryTenantDirectory([{ id: 'a', tier: 'free' }]);
    const tiers = tiersFor({ free: { weight: 1 }, pro: { weight: 5 } }, directory);
    const told: string[] = [];
    tiers.onRefresh((tenantId) => {
      told.push(tenantId);
    });
    await tiers.setTier('a', 'pro');
    const assigned = await tiers.profile('a');
    expect(assigned).toMatchObject({ tier: 'pro', directoryTier: 'free' });
    expect(tiers.limits(assigned, 'q')).toEqual({ weight: 5 });
    expect(told).toEqual(['a']);
    await tiers.setTier('a', null);
    const back = await tiers.profile('a');
    expect(back.tier).toBe('free');
    expect(back.directoryTier).toBeUndefined();
  });

  it('assigns a tier to a tenant without a directory record', async () => {
    const tiers = tiersFor({ pro: { maxConcurrency: 3 } }, new InMemoryTenantDirectory([]));
    expect(tiers.configured).toBe(true);
    await tiers.setTier('new-co', 'pro');
    expect(await tiers.profile('new-co')).toMatchObject({ tier: 'pro', directoryTier: null });
  });

  it.each([['gold'], ['constructor'], [''], [7]])(
    'refuses the tier %j the option does not define, writing nothing',
    async (tier) => {
      const directory = new InMemoryTenantDirectory([{ id: 'a', tier: 'free' }]);
      const tiers = tiersFor({ free: {}, pro: {} }, directory);
      await expect(tiers.setTier('a', tier as never)).rejects.toThrow(UnknownTierError);
      await expect(tiers.setTier('a', tier as never)).rejects.toThrow(/free, pro/);
      expect((await tiers.profile('a')).tier).toBe('free');
    },
  );

  it('reads nothing from a record that names another tenant, and warns once a change', async () => {
    // A directory whose lookup answers with the wrong row (a join gone astray): "a" gets "big".
    const big = { id: 'big', status: 'active', tier: 'pro', weight: 9, pools: { q: 'big-only' } };
    let answer: TenantRecord = big as TenantRecord;
    const astray: TenantDirectory = {
      getTenant: async () => answer,
      listActiveTenants: async () => ({ tenants: [], nextCursor: null }),
    };
    const tiers = tiersFor({ pro: { maxConcurrency: 4 } }, astray as never, 0);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      for (let i = 0; i < 3; i++) {
        const a = await tiers.profile('a');
        expect(a).toEqual({ tenantId: 'a', record: null, tier: undefined });
        expect(tiers.limits(a, 'q')).toEqual({});
        expect(tiers.pool(a, 'q')).toBeUndefined();
      }
      answer = { ...big, id: 'other' } as TenantRecord;
      await tiers.profile('a');
      answer = { ...big, id: 'a' } as TenantRecord; // its own again: read
      expect(tiers.limits(await tiers.profile('a'), 'q')).toEqual({ weight: 9, maxConcurrency: 4 });
      answer = { ...big, id: undefined } as unknown as TenantRecord; // no id: taken as its own
      expect(tiers.pool(await tiers.profile('a'), 'q')).toBe('big-only');
      expect(warn.mock.calls.map(([message]) => String(message))).toEqual([
        expect.stringContaining(
          'TenantDirectory.getTenant("a") returned the record of tenant "big", which says nothing ' +
            'of "a": its tier, limits and pool are not read from it',
        ),
        expect.stringContaining('returned the record of tenant "other"'),
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  it('refuses a negative tierCacheMs', () => {
    expect(() => tiersFor({}, undefined, -1)).toThrow('"tierCacheMs"');
  });
});
