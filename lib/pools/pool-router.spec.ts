import { PoolRoutingUnavailableError } from './pool-routing-unavailable.error';
import { UnknownPoolError } from './unknown-pool.error';
import { TenantRecord } from '../core/types/tenant-directory.interface';
import { PreparedJob } from '../core/queues/job-dispatcher.interface';
import { InMemoryTenantDirectory } from '../testing';
import { TenantTiers } from '../core/tenants/tenant-tiers.service';
import { PoolIdLedger } from './pool-ids.script';
import { PoolRouter } from './pool-router';

class SwitchableDirectory extends InMemoryTenantDirectory {
  down = false;
  override async getTenant(tenantId: string): Promise<TenantRecord | null> {
    if (this.down) throw new Error('down');
    return super.getTenant(tenantId);
  }
}

/** The ledger's contract in memory (the Redis one is covered by test/e2e/pools/pools.e2e-spec.ts). */
class MemoryLedger implements PoolIdLedger {
  readonly first = new Map<string, string>();
  async claim(ids: string[], pools: string[]): Promise<string[]> {
    return ids.map((id, i) => {
      if (!this.first.has(id)) this.first.set(id, pools[i]);
      return this.first.get(id)!;
    });
  }
}

const job = (tenantId: string | undefined, jobId = `${tenantId}-${Math.random()}`) =>
  ({ name: 'j', data: {}, opts: { jobId }, tenantId }) as PreparedJob;

function setup(routing?: ConstructorParameters<typeof PoolRouter>[2]) {
  const directory = new SwitchableDirectory([
    { id: 'ent', tier: 'enterprise' },
    { id: 'own', pools: { imports: 'imports-own' } },
    { id: 'free', tier: 'free' },
    { id: 'odd', pools: { imports: 'imports-odd' } },
  ]);
  const tiers = new TenantTiers(
    {
      tiers: { enterprise: { pools: { imports: 'imports-ent' } }, free: {} },
      tierCacheMs: 0,
    } as never,
    { stateClient: () => undefined } as never,
    { assertTenantId: () => undefined } as never,
    directory,
  );
  const ledger = new MemoryLedger();
  const pools = new Set(['imports-ent', 'imports-own', 'imports-acme']);
  return { directory, ledger, router: new PoolRouter('imports', pools, routing, tiers, ledger) };
}

describe('PoolRouter', () => {
  it('takes the static map first, then the record, then the tier, else shared', async () => {
    const { router } = setup({ acme: 'imports-acme', ent: 'imports' });
    const jobs = ['acme', 'ent', 'own', 'free', undefined].map((t) => job(t));
    expect(await router.route(jobs, new Set())).toEqual([
      'imports-acme',
      'imports',
      'imports-own',
      'imports',
      'imports',
    ]);
  });

  it('lets a function decide, and falls through when it returns undefined', async () => {
    const { router } = setup((tenant) => (tenant.tenantId === 'free' ? 'imports-acme' : undefined));
    expect(await router.route([job('free'), job('ent')], new Set())).toEqual([
      'imports-acme',
      'imports-ent',
    ]);
  });

  it('names the source of an undeclared pool', async () => {
    const { router } = setup(() => 7 as never);
    await expect(router.route([job('free')], new Set())).rejects.toThrow(UnknownPoolError);
    const record = setup().router;
    await expect(record.route([job('odd')], new Set())).rejects.toThrow("tenant record's pools");
  });

  it('keeps a caller-chosen id on the pool that took it first', async () => {
    const { router, ledger } = setup();
    ledger.first.set('cron~ent~1', 'imports');
    const routed = await router.route(
      [job('ent', 'cron~ent~1'), job('ent', 'x')],
      new Set(['cron~ent~1']),
    );
    expect(routed).toEqual(['imports', 'imports-ent']);
    expect(ledger.first.has('x')).toBe(false);
  });

  it('falls back to the last pool on a directory outage, or refuses', async () => {
    const { router, directory } = setup();
    await router.route([job('ent')], new Set());
    directory.down = true;
    expect(await router.route([job('ent')], new Set())).toEqual(['imports-ent']);
    await expect(router.route([job('own')], new Set())).rejects.toThrow(
      PoolRoutingUnavailableError,
    );
  });
});
