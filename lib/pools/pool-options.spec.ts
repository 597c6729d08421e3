import { InvalidTenantQueueOptionsError } from '../core/errors';
import { poolsToConsume, resolvePools } from './pool-options';

describe('resolvePools', () => {
  const tiers = {
    gold: { pools: { imports: 'imports-gold', exports: 'exports-gold' } },
    free: { pools: { imports: 'imports' } },
    plain: {},
  };

  it('declares pools from the list, the static map and the tiers, once each, shared excluded', () => {
    expect(
      resolvePools(
        {
          name: 'imports',
          pools: ['imports-acme', 'imports-big'],
          routing: { acme: 'imports-acme', globex: 'imports-globex', small: 'imports' },
        },
        tiers,
      ),
    ).toEqual(['imports-acme', 'imports-big', 'imports-globex', 'imports-gold']);
  });

  it('declares nothing for a queue no pool names (the zero-cost path)', () => {
    expect(resolvePools({ name: 'emails' }, tiers)).toEqual([]);
    expect(resolvePools({ name: 'emails', routing: () => 'emails-x' }, {})).toEqual([]);
  });

  it.each([
    [{ pools: 'imports-acme' }, 'imports.pools'],
    [{ pools: ['imports:acme'] }, 'imports.pools'],
    [{ pools: [''] }, 'imports.pools'],
    [{ pools: ['imports'] }, 'the shared pool is the queue'],
    [{ routing: { acme: 'bad name' } }, 'imports.routing.acme'],
    [{ routing: ['imports-acme'] }, 'imports.routing'],
    [{ routing: 7 }, 'imports.routing'],
  ])('refuses %j naming %s', (input, field) => {
    const run = () => resolvePools({ name: 'imports', ...(input as object) }, {});
    expect(run).toThrow(InvalidTenantQueueOptionsError);
    expect(run).toThrow(field);
  });

  it('refuses a tier pool that is not a valid queue name', () => {
    expect(() =>
      resolvePools({ name: 'imports' }, { gold: { pools: { imports: 'a:b' } } }),
    ).toThrow('tiers.gold.pools.imports');
  });
});

describe('poolsToConsume', () => {
  const definition = {
    name: 'imports',
    pools: ['imports-acme', 'imports-big'],
  } as never;

  it('consumes every pool by default, the shared one last', () => {
    expect(poolsToConsume(definition)).toEqual(['imports-acme', 'imports-big', 'imports']);
  });

  it('consumes only the pools asked for', () => {
    expect(poolsToConsume(definition, ['imports-big'])).toEqual(['imports-big']);
    expect(poolsToConsume(definition, ['imports', 'imports-acme'])).toEqual([
      'imports-acme',
      'imports',
    ]);
  });

  it.each([[['imports-nope']], [[]], ['imports-acme']])('refuses %j', (requested) => {
    expect(() => poolsToConsume(definition, requested)).toThrow(InvalidTenantQueueOptionsError);
  });

  it('treats a queue without pools as its only pool', () => {
    expect(poolsToConsume({ name: 'emails' } as never)).toEqual(['emails']);
  });
});
