import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/**
 * The OpenTelemetry SDK as an app sets it up (a tracer provider, an AsyncLocalStorage context
 * manager, the W3C propagator), its finished spans in `exporter`; `removeTracing` undoes it.
 */
export function installTracing(exporter: InMemorySpanExporter): void {
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}

export function removeTracing(): void {
  trace.disable();
  context.disable();
  propagation.disable();
}
