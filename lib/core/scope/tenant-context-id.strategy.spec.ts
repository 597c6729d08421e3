import { ContextIdFactory, HostComponentInfo } from '@nestjs/core';
import { ClsServiceManager } from 'nestjs-cls';
import { TENANT_STATE } from '../context/tenant-state';
import { InvalidTenantQueueOptionsError } from '../errors';
import { TenantJob } from '../types/tenant-job.interface';
import { TenantContextIdStrategy } from './tenant-context-id.strategy';
import { TenantJobRequest } from './tenant-job-request';

const durable: HostComponentInfo = { token: 'Durable', isTreeDurable: true };
const perRequest: HostComponentInfo = { token: 'PerRequest', isTreeDurable: false };
const jobOf = (tenantId: string | undefined) => new TenantJobRequest(tenantId, {} as TenantJob);

describe('TenantContextIdStrategy', () => {
  it('maps durable trees to one ContextId per tenant and keeps the rest per request', () => {
    const strategy = new TenantContextIdStrategy();
    const first = ContextIdFactory.create();
    const a1 = strategy.attach(first, jobOf('a'));
    const a2 = strategy.attach(ContextIdFactory.create(), jobOf('a'));
    const b = strategy.attach(ContextIdFactory.create(), jobOf('b'));
    expect(a1.resolve(durable)).toBe(a2.resolve(durable));
    expect(a1.resolve(durable)).not.toBe(b.resolve(durable));
    expect(a1.resolve(perRequest)).toBe(first);
    expect(a1.payload).toEqual({ tenantId: 'a' });
    expect(Object.isFrozen(a1.payload)).toBe(true);
  });

  it("reads an HTTP request's tenant from the module's context", () => {
    const strategy = new TenantContextIdStrategy();
    const cls = ClsServiceManager.getClsService();
    const [x, y] = ['x', 'y'].map((tenantId) =>
      cls.run(() => {
        cls.set(TENANT_STATE, { tenantId });
        return strategy.attach(ContextIdFactory.create(), { headers: {} });
      }),
    );
    expect(x.payload).toEqual({ tenantId: 'x' });
    expect(x.resolve(durable)).not.toBe(y.resolve(durable));
    expect(strategy.size).toBe(2);
  });

  it('builds everything per request when there is no tenant', () => {
    const strategy = new TenantContextIdStrategy();
    for (const request of [jobOf(undefined), { headers: {} }]) {
      const contextId = ContextIdFactory.create();
      const resolver = strategy.attach(contextId, request);
      expect(resolver.resolve(durable)).toBe(contextId);
      expect(resolver.payload).toEqual({ tenantId: undefined });
    }
    expect(strategy.size).toBe(0);
  });

  it('lets a subclass read a tenant the module resolves later', () => {
    class PathStrategy extends TenantContextIdStrategy {
      protected override tenantOf(request: unknown) {
        return super.tenantOf(request) ?? (request as { params?: { t?: string } }).params?.t;
      }
    }
    const resolver = new PathStrategy().attach(ContextIdFactory.create(), { params: { t: 'p' } });
    expect(resolver.payload).toEqual({ tenantId: 'p' });
  });

  it('refuses a maxTenants that is not a positive integer', () => {
    for (const maxTenants of [0, -1, 1.5, Number.NaN]) {
      expect(() => new TenantContextIdStrategy({ maxTenants })).toThrow(
        InvalidTenantQueueOptionsError,
      );
    }
  });
});
