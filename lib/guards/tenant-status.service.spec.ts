import { TenantPortUnavailableError } from '../core/errors';
import { InMemoryTenantDirectory } from '../testing';
import { resolveGuardOptions } from './tenant-guard.options';
import {
  PermissiveTenantDirectory,
  isTenantDirectoryConfigured,
} from '../core/tenants/default-ports';
import { TenantStatusService } from './tenant-status.service';

class CountingDirectory extends InMemoryTenantDirectory {
  lookups = 0;
  override async getTenant(tenantId: string) {
    this.lookups++;
    return super.getTenant(tenantId);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function service(directory: InMemoryTenantDirectory, guards = {}) {
  return new TenantStatusService(directory, resolveGuardOptions(guards));
}

describe('TenantStatusService', () => {
  it('maps the directory answer to a verdict', async () => {
    const directory = new InMemoryTenantDirectory([
      { id: 'on' },
      { id: 'off', status: 'suspended' },
      { id: 'gone', status: 'deleted' },
      { id: 'odd', status: 'frozen' as never },
    ]);
    const status = service(directory);
    expect(await status.check('on')).toMatchObject({ allowed: true, tenant: { id: 'on' } });
    expect(await status.check('off')).toMatchObject({ reason: 'TENANT_SUSPENDED' });
    expect(await status.check('gone')).toMatchObject({ reason: 'TENANT_DELETED' });
    expect(await status.check('none')).toMatchObject({ reason: 'TENANT_UNKNOWN' });
    expect(await status.check('odd')).toMatchObject({
      allowed: false,
      reason: 'TENANT_UNKNOWN',
      message: expect.stringContaining('"frozen"'),
    });
  });

  it("refuses a tenant answered with another tenant's record (fails closed)", async () => {
    const directory = new InMemoryTenantDirectory([
      { id: 'on' },
      { id: 'off', status: 'suspended' },
    ]);
    directory.getTenant = async () => ({ id: 'on', status: 'active' });
    expect(await service(directory).check('off')).toMatchObject({
      allowed: false,
      reason: 'TENANT_UNKNOWN',
      message: expect.stringContaining('returned the record of tenant "on"'),
    });
    // Its own record with the id as a number (an integer column) is still its own.
    directory.getTenant = async () => ({ id: 42 as unknown as string, status: 'active' });
    expect(await service(directory).check('42')).toMatchObject({ allowed: true });
  });

  it('asks the directory every time unless a cache is configured', async () => {
    const directory = new CountingDirectory([{ id: 't' }]);
    const status = service(directory);
    await status.check('t');
    directory.setStatus('t', 'suspended');
    expect(await status.check('t')).toMatchObject({ reason: 'TENANT_SUSPENDED' });
    expect(directory.lookups).toBe(2);
  });

  it('serves a cached answer for at most tenantCacheTtlMs', async () => {
    const directory = new CountingDirectory([{ id: 't' }]);
    const status = service(directory, { tenantCacheTtlMs: 100 });
    await status.check('t');
    directory.setStatus('t', 'suspended');
    expect(await status.check('t')).toMatchObject({ allowed: true });
    expect(directory.lookups).toBe(1);
    await sleep(150);
    expect(await status.check('t')).toMatchObject({ reason: 'TENANT_SUSPENDED' });
    expect(directory.lookups).toBe(2);
  });

  it('keeps an unknown answer as long: a tenant created meanwhile is still unknown', async () => {
    const directory = new CountingDirectory();
    const status = service(directory, { tenantCacheTtlMs: 100 });
    expect(await status.check('new')).toMatchObject({ reason: 'TENANT_UNKNOWN' });
    directory.upsert({ id: 'new' });
    expect(await status.check('new')).toMatchObject({ reason: 'TENANT_UNKNOWN' });
    await sleep(150);
    expect(await status.check('new')).toMatchObject({ allowed: true });
    expect(directory.lookups).toBe(2);
  });

  it('with the cache on, shares one lookup among concurrent misses, and keeps no failure', async () => {
    const directory = new CountingDirectory([{ id: 't' }]);
    let fail = true;
    const answer = directory.getTenant.bind(directory);
    directory.getTenant = async (tenantId: string) => {
      const record = await answer(tenantId);
      if (fail) throw new Error('db down');
      return record;
    };
    const status = service(directory, { tenantCacheTtlMs: 10_000 });
    const failed = await Promise.allSettled([1, 2, 3, 4, 5].map(() => status.check('t')));
    expect(failed.every((r) => r.status === 'rejected')).toBe(true);
    expect(directory.lookups).toBe(1);
    fail = false;
    const verdicts = await Promise.all([1, 2, 3].map(() => status.check('t')));
    expect(verdicts).toEqual([1, 2, 3].map(() => expect.objectContaining({ allowed: true })));
    expect(directory.lookups).toBe(2);
  });

  it('turns a throw or a timeout into TenantPortUnavailableError', async () => {
    const broken = new InMemoryTenantDirectory();
    broken.getTenant = async () => {
      throw new Error('db down');
    };
    await expect(service(broken).check('t')).rejects.toThrow(TenantPortUnavailableError);
    const hanging = new InMemoryTenantDirectory();
    hanging.getTenant = () => new Promise(() => undefined);
    await expect(service(hanging, { portTimeoutMs: 20 }).check('t')).rejects.toThrow(
      /did not answer within 20 ms/,
    );
  });

  it('refuses a cache longer than 30 s', () => {
    expect(() => resolveGuardOptions({ tenantCacheTtlMs: 60_000 })).toThrow(
      /guards.tenantCacheTtlMs/,
    );
  });
});

describe('isTenantDirectoryConfigured', () => {
  it('tells the permissive default from a real directory', () => {
    expect(isTenantDirectoryConfigured(undefined)).toBe(false);
    expect(isTenantDirectoryConfigured(new PermissiveTenantDirectory())).toBe(false);
    expect(isTenantDirectoryConfigured(new InMemoryTenantDirectory())).toBe(true);
  });
});
