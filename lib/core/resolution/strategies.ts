import type { TenantResolverName } from '../types/core-options.interface';
import { customStrategy } from './custom.strategy';
import { headerStrategy } from './header.strategy';
import { jwtClaimStrategy } from './jwt-claim.strategy';
import { pathParamStrategy } from './path-param.strategy';
import { subdomainStrategy } from './subdomain.strategy';
import { TenantResolutionStrategy } from './tenant-resolution-strategy.interface';

/**
 * Every resolution strategy, by the name `resolution.order` uses. A new one is a file in this
 * folder (its strategy, and its name added to `TenantResolverNames`) plus its line here.
 */
export const RESOLUTION_STRATEGIES: Readonly<Record<TenantResolverName, TenantResolutionStrategy>> =
  {
    header: headerStrategy,
    subdomain: subdomainStrategy,
    jwtClaim: jwtClaimStrategy,
    pathParam: pathParamStrategy,
    custom: customStrategy,
  };
