import { Messages } from '../../tenant-queue.messages';
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
  read(req, options) {
    const value = options.custom?.(req);
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string' || typeof value === 'number') return asString(value);
    // A Promise (an async resolver) or an object would silently count as "no tenant".
    const type = typeof value;
    const got =
      typeof (value as { then?: unknown }).then === 'function'
        ? 'a Promise'
        : `${type === 'object' ? 'an' : 'a'} ${type}`;
    throw new TypeError(Messages.customResolverResult(got));
  },
  describe: () => 'resolution.custom',
};
