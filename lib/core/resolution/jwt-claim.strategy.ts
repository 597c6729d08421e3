import { TenantResolutionStrategy, asString } from './tenant-resolution-strategy.interface';

declare module '../types/core-options.interface' {
  interface TenantResolverNames {
    /** A claim of `req.user` (`resolution.jwtClaim`, a dotted path), set by the auth guard. */
    jwtClaim: true;
  }
}

/** `a.b.c` of `source`, own properties only (never the prototype's `constructor`, ...). */
function readPath(source: unknown, path: string): unknown {
  let value: any = source;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = value[key];
  }
  return value;
}

export const jwtClaimStrategy: TenantResolutionStrategy = {
  late: true,
  clientWritten: false,
  read: (req, options) => asString(readPath(req?.user, options.jwtClaim)),
  describe: (options) => `JWT claim "${options.jwtClaim}"`,
};
