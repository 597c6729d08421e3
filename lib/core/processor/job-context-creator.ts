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

/**
 * An `ExternalContextCreator` that applies only the guards and interceptors declared on the
 * processor class or method. Built like Nest's own `fromContainer`, minus the application config
 * that carries app-global enhancers: HTTP-minded global guards then never see a job, and a job
 * with no enhancers of its own pays nothing for the app's global ones (nestjs-cls mounts a global
 * guard and interceptor, which would otherwise wrap every job in rxjs).
 */
export function createLocalContextCreator(
  withGlobals: ExternalContextCreator,
): ExternalContextCreator {
  // Nest keeps the container on the instance it provides; there is no public accessor.
  const container = (withGlobals as unknown as { container: NestContainer }).container;
  return new ExternalContextCreator(
    new GuardsContextCreator(container),
    new GuardsConsumer(),
    new InterceptorsContextCreator(container),
    new InterceptorsConsumer(),
    container.getModules(),
    new PipesContextCreator(container),
    new PipesConsumer(),
    new ExternalExceptionFilterContext(container),
  );
}
