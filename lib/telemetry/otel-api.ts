/** The part of `@opentelemetry/api` the module uses (an optional peer, loaded only when needed). */
export interface OtelApi {
  trace: {
    getActiveSpan(): { setAttribute(key: string, value: string): unknown } | undefined;
  };
}

/** `@opentelemetry/api` when installed (bullmq-otel depends on it), else `undefined`. */
export function loadOtelApi(): OtelApi | undefined {
  try {
    // Lazy on purpose: @opentelemetry/api is an optional peer dependency.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('@opentelemetry/api') as OtelApi;
  } catch {
    return undefined;
  }
}

/**
 * Span attribute carrying the tenant (its metric label, so its values stay bounded).
 * @publicApi
 */
export const TENANT_ID_ATTRIBUTE = 'tenant.id';
