/** The points where features plug into the kernel, each a decorated provider found by discovery. */
export type SeamKind =
  | 'stage'
  | 'worker-plugin'
  | 'queue-feature'
  | 'dispatcher'
  | 'router'
  | 'enqueue-observer'
  | 'worker-event-source';

/** What a seam decorator writes on its class: the seam, and where in it the provider goes. */
export interface SeamDeclaration {
  kind: SeamKind;
  /** A stage's phase, as its index (outermost 0); 0 for the kinds that have no phases. */
  phase: number;
  /** Within its phase, lower first; equal orders keep the order of discovery. */
  order: number;
  /** What the provider checks and decides from `registerQueue`'s options, while queues register. */
  options?: object;
}

/** One provider of a seam, with its declaration. */
export interface SeamProvider<T> {
  instance: T;
  seam: SeamDeclaration;
}

const SEAMS = Symbol('tenant-queue:seams');

/** @internal Declares the class a provider of one seam (a class may plug into several). */
export function declareSeam(declaration: SeamDeclaration): ClassDecorator {
  return (target) => {
    const declared = (Reflect.getOwnMetadata(SEAMS, target) as SeamDeclaration[]) ?? [];
    Reflect.defineMetadata(SEAMS, [...declared, declaration], target);
  };
}

/** @internal What a class declares for one seam, if anything. */
export function seamOf(type: unknown, kind: SeamKind): SeamDeclaration | undefined {
  if (typeof type !== 'function') return undefined;
  const declared = Reflect.getMetadata(SEAMS, type) as SeamDeclaration[] | undefined;
  return declared?.find((declaration) => declaration.kind === kind);
}

/** @internal Sorts by phase, then order; stable, so equal ones keep their order. */
export function bySeamPlace<T extends { seam: SeamDeclaration }>(entries: T[]): T[] {
  return entries.sort((a, b) => a.seam.phase - b.seam.phase || a.seam.order - b.seam.order);
}
