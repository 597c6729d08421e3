import { BadRequestException, ForbiddenException } from '@nestjs/common';
import { TenantSourceConflictError } from '../errors';
import { CoreModuleOptions } from '../types/core-options.interface';
import { resolveTenantQueueOptions } from '../options/core.options';
import { TenantResolver } from './tenant-resolver';

const resolver = (resolution: CoreModuleOptions['resolution'] = {}) =>
  new TenantResolver(resolveTenantQueueOptions({ connection: {}, resolution }));

const req = (over: Record<string, unknown> = {}) => ({ headers: {}, ...over });

describe('TenantResolver', () => {
  it('reads the header strategy by default and keeps a well-formed correlation id', () => {
    const state = resolver().begin(
      req({ headers: { 'x-tenant-id': 'acme', 'x-request-id': 'r-1' } }),
    );
    expect(state).toMatchObject({ tenantId: 'acme', strategy: 'header', correlationId: 'r-1' });
  });

  it('replaces a malformed correlation id with a UUID', () => {
    const state = resolver().begin(req({ headers: { 'x-request-id': 'has space' } }));
    expect(state.correlationId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each([
    ['acme.app.example.com', ['app.example.com'], 'acme'],
    ['acme.app.example.com:8080', ['app.example.com'], 'acme'],
    ['a.b.app.example.com', ['app.example.com'], undefined],
    ['app.example.com', ['app.example.com'], undefined],
    ['evil.com', ['app.example.com'], undefined],
    ['acme.example.com', [], 'acme'],
    ['www.example.com', [], undefined],
    ['example.com', [], undefined],
    ['127.0.0.1', [], undefined],
  ])('subdomain of %s (bases %j) is %j', (host, bases, expected) => {
    const state = resolver({ order: ['subdomain'], subdomainBaseDomains: bases }).begin(
      req({ headers: { host } }),
    );
    expect(state.tenantId).toBe(expected);
  });

  it('tries strategies in order and records which one answered', () => {
    const r = resolver({ order: ['custom', 'header'], custom: (q) => q.headers['x-org'] });
    expect(r.begin(req({ headers: { 'x-org': 'org1', 'x-tenant-id': 'hdr' } }))).toMatchObject({
      tenantId: 'org1',
      strategy: 'custom',
    });
    expect(r.begin(req({ headers: { 'x-tenant-id': 'hdr' } }))).toMatchObject({
      tenantId: 'hdr',
      strategy: 'header',
    });
  });

  // The option's type says string | undefined; a JavaScript app (or an `as any`) still gets here.
  it('refuses an async resolution.custom at boot instead of reading "no tenant" from its Promise', () => {
    const custom = (async () => 'acme') as never;
    expect(() => resolver({ order: ['custom'], custom })).toThrow(
      'Invalid TenantQueueModule option "resolution.custom": is an async function',
    );
  });

  it('refuses a Promise answer of resolution.custom with a TypeError naming the fix', () => {
    const custom = (() => Promise.resolve('acme')) as never;
    expect(() => resolver({ order: ['custom'], custom }).begin(req())).toThrow(
      new TypeError(
        'resolution.custom returned a Promise, not a tenant id. It must return the tenant id (a ' +
          'string) or undefined synchronously: the tenant is resolved before the route runs, and ' +
          'a Promise would never be awaited. Look up an async tenant in your own middleware (or an ' +
          'auth guard that sets req.user, with the jwtClaim strategy) and have resolution.custom ' +
          'read what it set.',
      ),
    );
  });

  it('refuses a resolution.custom answer that is an object, and reads null as no tenant', () => {
    expect(() =>
      resolver({ order: ['custom'], custom: () => ({ id: 'acme' }) as never }).begin(req()),
    ).toThrow('resolution.custom returned an object, not a tenant id');
    expect(
      resolver({ order: ['custom'], custom: () => null as never }).begin(req()).tenantId,
    ).toBeUndefined();
  });

  it.each([
    '.app.example.com',
    'app.example.com:3000',
    'https://app.example.com',
    'app.example.com/',
    '',
  ])('refuses the subdomain base %j at boot: no host would ever match it', (base) => {
    expect(() => resolver({ order: ['subdomain'], subdomainBaseDomains: [base] })).toThrow(
      `Invalid TenantQueueModule option "resolution.subdomainBaseDomains": ${JSON.stringify(base)} is not a host name`,
    );
  });

  it('defers late strategies until settle(), after auth and routing', () => {
    const r = resolver({ order: ['jwtClaim', 'pathParam'], jwtClaim: 'org.id' });
    const request: any = req();
    const state = r.begin(request);
    expect(state.tenantId).toBeUndefined();
    request.user = { sub: 'u1', org: { id: 'initech' } };
    r.settle(state);
    expect(state).toMatchObject({
      tenantId: 'initech',
      strategy: 'jwtClaim',
      actor: { type: 'user', id: 'u1' },
    });
  });

  it.each([
    [42, '42'],
    [['acme', 'globex'], 'acme'],
  ])('reads the claim %j as tenant %j (the security page says so)', (claim, tenantId) => {
    const r = resolver({ order: ['jwtClaim'], jwtClaim: 'tid' });
    const state = r.begin(req({ user: { sub: 'u1', tid: claim } }));
    r.settle(state);
    expect(state.tenantId).toBe(tenantId);
  });

  it('does not read inherited properties of req.user as claims', () => {
    const r = resolver({ order: ['jwtClaim'], jwtClaim: 'constructor' });
    const state = r.begin(req({ user: {} }));
    r.settle(state);
    expect(state.tenantId).toBeUndefined();
  });

  it.each(['../x', 'a b', '', 'x'.repeat(65), '-x', 'a:b'])(
    'answers 400 for the header %j',
    (bad) => {
      if (bad === '')
        return expect(
          resolver().begin(req({ headers: { 'x-tenant-id': bad } })).tenantId,
        ).toBeUndefined();
      expect(() => resolver().begin(req({ headers: { 'x-tenant-id': bad } }))).toThrow(
        BadRequestException,
      );
    },
  );

  it('validates present values of early strategies even when a late one comes first', () => {
    const r = resolver({ order: ['jwtClaim', 'header'] });
    expect(() => r.begin(req({ headers: { 'x-tenant-id': '../x' } }))).toThrow(BadRequestException);
  });
});

describe('TenantResolver: claim versus unauthenticated sources', () => {
  const r = resolver({ order: ['jwtClaim', 'header', 'subdomain'], jwtClaim: 'tid' });

  it('keeps a tenant read before auth provisional, then refuses a header naming another tenant', () => {
    const request: any = req({ headers: { 'x-tenant-id': 'globex' } });
    const state = r.begin(request);
    r.settle(state);
    expect(state).toMatchObject({ tenantId: 'globex', strategy: 'header' });
    request.user = { sub: 'alice', tid: 'acme' };
    let thrown: any;
    try {
      r.settle(state);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ForbiddenException);
    expect(thrown.cause).toBeInstanceOf(TenantSourceConflictError);
    expect(thrown.cause).toMatchObject({
      claim: { strategy: 'jwtClaim', tenantId: 'acme' },
      other: { strategy: 'header', tenantId: 'globex' },
    });
    expect(state.tenantId).toBeUndefined();
    expect(() => r.settle(state)).toThrow(ForbiddenException);
  });

  it('refuses a subdomain naming another tenant, whatever the order', () => {
    const sub = resolver({ order: ['subdomain', 'jwtClaim'], jwtClaim: 'tid' });
    const state = sub.begin(
      req({ headers: { host: 'globex.example.com' }, user: { tid: 'acme' } }),
    );
    expect(() => sub.settle(state)).toThrow(/subdomain names "globex"/);
  });

  it('caches the answer once the claim could be read', () => {
    const request: any = req({ headers: { 'x-tenant-id': 'acme' }, user: { tid: 'acme' } });
    const state = r.begin(request);
    r.settle(state);
    expect(state).toMatchObject({ tenantId: 'acme', strategy: 'jwtClaim' });
    request.headers['x-tenant-id'] = 'globex';
    r.settle(state);
    expect(state.tenantId).toBe('acme');
  });

  it('falls back to the header for an authenticated user without the claim', () => {
    const state = r.begin(req({ headers: { 'x-tenant-id': 'acme' }, user: { sub: 'svc' } }));
    r.settle(state);
    expect(state).toMatchObject({ tenantId: 'acme', strategy: 'header' });
  });
});
