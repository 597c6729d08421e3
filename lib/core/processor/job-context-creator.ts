import { CanActivate, NestInterceptor } from '@nestjs/common';
import { ExternalContextCreator } from '@nestjs/core';
import { ExternalExceptionFilterContext } from '@nestjs/core/exceptions/external-exception-filter-context';
// File paths, not folder indexes: Nest 12's exports map resolves `@nestjs/core/<x>` to `<x>.js`.
import { GuardsConsumer } from '@nestjs/core/guards/guards-consumer';
import { GuardsContextCreator } from '@nestjs/core/guards/guards-context-creator';
import type { NestContainer } from '@nestjs/core/injector/container';
import { InterceptorsConsumer } from '@nestjs/core/interceptors/interceptors-consumer';
import { InterceptorsContextCreator } from '@nestjs/core/interceptors/interceptors-context-creator';
import { PipesConsumer } from '@nestjs/core/pipes/pipes-consumer';
import { PipesContextCreator } from '@nestjs/core/pipes/pipes-context-creator';
import { ClsGuard, ClsInterceptor } from 'nestjs-cls';

/**
 * nestjs-cls's own guard and interceptor find no store of theirs for a job (its context kind is
 * none they know), so they open an empty one: the handler would run without its tenant. The
 * runner already does their work for each job (plugin hooks, `CLS_ID`, setup, proxy providers),
 * so a job's enhancers leave them out.
 */
class JobGuardsContextCreator extends GuardsContextCreator {
  override create(...args: Parameters<GuardsContextCreator['create']>): CanActivate[] {
    return super.create(...args).filter((guard) => !(guard instanceof ClsGuard));
  }
}

class JobInterceptorsContextCreator extends InterceptorsContextCreator {
  override create(...args: Parameters<InterceptorsContextCreator['create']>): NestInterceptor[] {
    return super.create(...args).filter((interceptor) => !(interceptor instanceof ClsInterceptor));
  }
}

/**
 * The `ExternalContextCreator` of job handlers, built like Nest's own `fromContainer`. With
 * `globals` false it applies only the guards and interceptors declared on the processor class or
 * method (no application config, which carries app-global enhancers): HTTP-minded global guards
 * then never see a job, and a job with no enhancers of its own pays nothing for the app's global
 * ones (nestjs-cls mounts a global guard and interceptor, which would otherwise wrap every job in
 * rxjs). Either way nestjs-cls's `ClsGuard` and `ClsInterceptor` are left out (see above).
 */
export function createJobContextCreator(
  withGlobals: ExternalContextCreator,
  globals: boolean,
): ExternalContextCreator {
  // Nest keeps the container on the instance it provides; there is no public accessor.
  const container = (withGlobals as unknown as { container: NestContainer }).container;
  const config = globals ? container.applicationConfig : undefined;
  return new ExternalContextCreator(
    new JobGuardsContextCreator(container, config),
    new GuardsConsumer(),
    new JobInterceptorsContextCreator(container, config),
    new InterceptorsConsumer(),
    container.getModules(),
    new PipesContextCreator(container, config),
    new PipesConsumer(),
    new ExternalExceptionFilterContext(container, config),
  );
}
