import { TenantResolutionStrategy, asString } from './tenant-resolution-strategy.interface';

declare module '../types/core-options.interface' {
  interface TenantResolverNames {
    /** A route parameter (`resolution.pathParam`), read after routing. */
    pathParam: true;
  }
}

export const pathParamStrategy: TenantResolutionStrategy = {
  late: true,
  clientWritten: true,
  read: (req, options) => asString(req?.params?.[options.pathParam]),
  describe: (options) => `path parameter "${options.pathParam}"`,
};
