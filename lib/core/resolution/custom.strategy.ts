import { TenantResolutionStrategy, asString } from './tenant-resolution-strategy.interface';

declare module '../types/core-options.interface' {
  interface TenantResolverNames {
    /** The app's own `resolution.custom(req)`. */
    custom: true;
  }
}

export const customStrategy: TenantResolutionStrategy = {
  late: false,
  clientWritten: false,
  read: (req, options) => asString(options.custom?.(req)),
  describe: () => 'resolution.custom',
};
