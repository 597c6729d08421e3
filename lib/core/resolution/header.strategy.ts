import { TenantResolutionStrategy, asString } from './tenant-resolution-strategy.interface';

declare module '../types/core-options.interface' {
  interface TenantResolverNames {
    /** A request header (`resolution.header`, default `x-tenant-id`). */
    header: true;
  }
}

export const headerStrategy: TenantResolutionStrategy = {
  late: false,
  clientWritten: true,
  read: (req, options) => asString(req?.headers?.[options.header]),
  describe: (options) => `header "${options.header}"`,
};
