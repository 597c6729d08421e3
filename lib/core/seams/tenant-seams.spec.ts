import 'reflect-metadata';
import { DiscoveryService } from '@nestjs/core';
import { declareSeam, seamOf } from './seam-declaration';
import { TenantSeams } from './tenant-seams';

@declareSeam({ kind: 'worker-plugin', phase: 0, order: 30 })
@declareSeam({ kind: 'enqueue-observer', phase: 0, order: 10 })
class Late {}

@declareSeam({ kind: 'worker-plugin', phase: 0, order: 10 })
class Early {}

@declareSeam({ kind: 'worker-plugin', phase: 0, order: 30 })
class LateToo {}

@declareSeam({ kind: 'stage', phase: 0, order: 50 })
class OuterPhase {}

@declareSeam({ kind: 'stage', phase: 2, order: 1 })
class InnerPhase {}

class Plain {}

/** A provider as `DiscoveryService` lists it: built (`instance`) or not yet. */
function wrapper(metatype: new () => object, built = true) {
  return {
    metatype,
    instance: built ? new metatype() : undefined,
    isDependencyTreeStatic: () => true,
  };
}

function seamsOver(wrappers: ReturnType<typeof wrapper>[]): TenantSeams {
  return new TenantSeams({ getProviders: () => wrappers } as unknown as DiscoveryService);
}

describe('TenantSeams', () => {
  it('orders by declared order, equal orders in discovery order, each kind apart', () => {
    const seams = seamsOver([wrapper(Late), wrapper(Plain), wrapper(LateToo), wrapper(Early)]);
    const names = (kind: 'worker-plugin' | 'enqueue-observer') =>
      seams.instances<object>(kind).map((instance) => instance.constructor.name);
    expect(names('worker-plugin')).toEqual(['Early', 'Late', 'LateToo']);
    expect(names('enqueue-observer')).toEqual(['Late']);
  });

  it('orders stages by phase before order', () => {
    const seams = seamsOver([wrapper(InnerPhase), wrapper(OuterPhase)]);
    expect(seams.instances<object>('stage').map((s) => s.constructor.name)).toEqual([
      'OuterPhase',
      'InnerPhase',
    ]);
  });

  it('reads declarations from classes not built yet, each class once', () => {
    const seams = seamsOver([wrapper(Late, false), wrapper(Early, false), wrapper(Late, false)]);
    expect(seams.declarations('worker-plugin').map((seam) => seam.order)).toEqual([10, 30]);
    expect(seams.instances('worker-plugin')).toEqual([]);
  });

  it('lists an instance provided under two tokens once', () => {
    const shared = wrapper(Early);
    const alias = { ...shared, metatype: undefined as never };
    expect(seamsOver([shared, alias]).instances('worker-plugin')).toHaveLength(1);
  });

  it('finds nothing on a class without a declaration of that kind', () => {
    expect(seamOf(Plain, 'stage')).toBeUndefined();
    expect(seamOf(Late, 'stage')).toBeUndefined();
    expect(seamOf(Late, 'enqueue-observer')).toMatchObject({ order: 10 });
  });
});
