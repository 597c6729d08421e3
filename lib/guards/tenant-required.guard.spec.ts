import { BadRequestException, ExecutionContext } from '@nestjs/common';
import { TenantContext } from '../core/context/tenant-context';
import { resolveTenantQueueOptions } from '../core/options/core.options';
import { CoreModuleOptions } from '../core/types/core-options.interface';
import { TenantRequiredGuard } from './tenant-required.guard';
import { TenantStatusService } from './tenant-status.service';

/** The 400 the guard answers to a request without a tenant, under `resolution`. */
async function refusal(resolution: CoreModuleOptions['resolution']): Promise<string> {
  const guard = new TenantRequiredGuard(
    { tenantId: undefined } as TenantContext,
    resolveTenantQueueOptions({ connection: {}, resolution }),
    {} as TenantStatusService,
  );
  const http = { getType: () => 'http' } as unknown as ExecutionContext;
  const error = await guard.canActivate(http).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(BadRequestException);
  return (error as BadRequestException).message;
}

describe('TenantRequiredGuard: the 400 names where this app reads the tenant', () => {
  it.each<[CoreModuleOptions['resolution'], string]>([
    [undefined, 'This route needs a tenant. Send it in the "x-tenant-id" header.'],
    [
      { order: ['header', 'subdomain'], header: 'X-Org' },
      'This route needs a tenant. Send it in the "x-org" header or the subdomain.',
    ],
    [
      { order: ['jwtClaim', 'pathParam'], jwtClaim: 'org.id', pathParam: 'org' },
      'This route needs a tenant. Send it in your credentials (their "org.id" claim) or the path parameter "org".',
    ],
    [
      { order: ['custom'], custom: () => undefined },
      'This route needs a tenant, and this app found none for the request.',
    ],
  ])('resolution %j', async (resolution, message) => {
    expect(await refusal(resolution)).toBe(message);
  });
});
