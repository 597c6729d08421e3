import { Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { SeamDeclaration, SeamKind, SeamProvider, bySeamPlace, seamOf } from './seam-declaration';

/**
 * @internal Finds the providers of each seam with `DiscoveryService`, in their declared order.
 * Declarations are read from the classes, so the kernel can use them while Nest still builds
 * providers (queues register then); instances once Nest has built them all (from `onModuleInit`).
 */
@Injectable()
export class TenantSeams {
  private readonly declared = new Map<SeamKind, SeamDeclaration[]>();
  private readonly found = new Map<SeamKind, SeamProvider<unknown>[]>();
  private readonly instanceLists = new Map<SeamKind, unknown[]>();

  constructor(private readonly discovery: DiscoveryService) {}

  /** The declarations of `kind` of every provider class in the app, in order, each class once. */
  declarations(kind: SeamKind): readonly SeamDeclaration[] {
    let declarations = this.declared.get(kind);
    if (!declarations) {
      const seen = new Set<unknown>();
      const entries: { seam: SeamDeclaration }[] = [];
      for (const wrapper of this.discovery.getProviders()) {
        const seam = seamOf(wrapper.metatype, kind);
        if (!seam || seen.has(wrapper.metatype)) continue;
        seen.add(wrapper.metatype);
        entries.push({ seam });
      }
      declarations = bySeamPlace(entries).map((entry) => entry.seam);
      this.declared.set(kind, declarations);
    }
    return declarations;
  }

  /**
   * The providers of `kind`, in order, each instance once (aliases share it). Found on the first
   * call, which must come after Nest built every provider: `onModuleInit` or later.
   */
  providers<T>(kind: SeamKind): readonly SeamProvider<T>[] {
    let providers = this.found.get(kind);
    if (!providers) {
      const seen = new Set<object>();
      providers = [];
      for (const wrapper of this.discovery.getProviders()) {
        const instance = wrapper.instance as object | undefined;
        if (!wrapper.isDependencyTreeStatic() || !instance || typeof instance !== 'object')
          continue;
        const seam = seamOf(instance.constructor, kind);
        if (!seam || seen.has(instance)) continue;
        seen.add(instance);
        providers.push({ instance, seam });
      }
      this.found.set(kind, bySeamPlace(providers));
    }
    return providers as SeamProvider<T>[];
  }

  /** The instances of `kind`, in order (one array per kind: writes read it per call). */
  instances<T>(kind: SeamKind): readonly T[] {
    let instances = this.instanceLists.get(kind);
    if (!instances) {
      instances = this.providers(kind).map((provider) => provider.instance);
      this.instanceLists.set(kind, instances);
    }
    return instances as T[];
  }
}
