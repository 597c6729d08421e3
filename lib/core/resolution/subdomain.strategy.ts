import { TenantResolutionStrategy, asString } from './tenant-resolution-strategy.interface';

declare module '../types/core-options.interface' {
  interface TenantResolverNames {
    /** The first label of the host (`acme.app.example.com`), below `subdomainBaseDomains`. */
    subdomain: true;
  }
}

export const subdomainStrategy: TenantResolutionStrategy = {
  late: false,
  clientWritten: true,
  read(req, options) {
    const raw = asString(req?.hostname) ?? asString(req?.headers?.host);
    if (!raw) return undefined;
    const host = raw.replace(/:\d+$/, '').toLowerCase();
    const bases = options.subdomainBaseDomains;
    if (bases.length > 0) {
      const base = bases.find((b) => host.endsWith(`.${b}`));
      if (!base) return undefined;
      const sub = host.slice(0, -(base.length + 1));
      return sub && !sub.includes('.') ? sub : undefined;
    }
    const labels = host.split('.');
    if (labels.length < 3 || labels[0] === 'www' || /^\d+$/.test(labels[labels.length - 1])) {
      return undefined;
    }
    return labels[0];
  },
  describe: () => 'subdomain',
};
