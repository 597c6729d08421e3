import type { ConnectionOptions, Telemetry } from 'bullmq';
import type { TenantTierOptions } from './tenant-tier-options.interface';
import type { TenantActor } from './actor.interface';
import type { TenantJobClsOptions } from './job-cls-options.interface';

/**
 * The request-resolution strategies by name. Each strategy's file (lib/core/resolution)
 * adds its own name here by declaration merging.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface TenantResolverNames {}

/**
 * Strategy names tried, in order, to find the tenant of an HTTP request.
 * @publicApi
 */
export type TenantResolverName = keyof TenantResolverNames & string;

/** @publicApi */
export interface TenantResolutionOptions {
  /**
   * Strategies tried in this order; the first that yields a value wins.
   * @default ['header']
   */
  order?: TenantResolverName[];
  /** @default 'x-tenant-id' */
  header?: string;
  /**
   * Claim read from `req.user` (set by your auth guard or passport). Resolved lazily, so it works
   * when auth runs after the middleware.
   * @default 'tenantId'
   */
  jwtClaim?: string;
  /** Route parameter holding the tenant (resolved lazily, after routing). @default 'tenantId' */
  pathParam?: string;
  /**
   * Base domains for the `subdomain` strategy: `acme.app.example.com` with base `app.example.com`
   * gives `acme`. Without it the first label of a host with three or more labels is used.
   */
  subdomainBaseDomains?: string[];
  /** Your own resolver, used by the `custom` strategy. */
  custom?: (req: any) => string | undefined;
  /**
   * Mount the resolution middleware on every route. Turn off to apply
   * `TenantResolutionMiddleware` yourself.
   * @default true
   */
  mount?: boolean;
}

/**
 * Envelope integrity. Off unless `secret` is set.
 * @publicApi
 */
export interface TenantEnvelopeOptions {
  /**
   * HMAC-SHA256 secret(s), each at least 32 characters. The first signs every new envelope; any
   * of them verifies, so rotate by putting the new secret first and dropping the old one once the
   * jobs signed with it are gone. Workers then refuse unsigned or altered envelopes
   * (`INVALID_ENVELOPE`).
   * @default undefined (envelopes are neither signed nor verified)
   */
  secret?: string | string[];
}

/** The kernel's part of the module options; each feature adds its own slice. */
export interface CoreModuleOptions {
  /** BullMQ/ioredis connection used by every queue, worker and script of the module. */
  connection: ConnectionOptions;
  /**
   * Prefix of every Redis key. BullMQ's prefix for queue `Q` becomes `{<prefix>:Q}`, a hash tag,
   * so each queue lives in one Redis Cluster slot.
   * @default 'tq'
   */
  prefix?: string;
  /** How HTTP requests are mapped to a tenant. */
  resolution?: TenantResolutionOptions;
  /**
   * Tenant ids must match this pattern, or they are refused (400 on HTTP,
   * `InvalidTenantIdError` elsewhere).
   * @default /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/
   */
  tenantIdPattern?: RegExp;
  /**
   * Finds the actor of a request. Default: `req.user` with `id` (or `sub`) as a `user`,
   * otherwise `anonymous`.
   */
  resolveActor?: (req: any) => TenantActor | undefined;
  /** Finds the locale of a request. Default: the first tag of `Accept-Language`. */
  resolveLocale?: (req: any) => string | undefined;
  /**
   * Request header carrying a correlation id; a new UUID is used when absent or malformed.
   * @default 'x-request-id'
   */
  correlationHeader?: string;
  /** Deployment environment stamped on every envelope (e.g. `production`). */
  environment?: string;
  /**
   * Run the app's global guards and interceptors (`APP_GUARD`, `useGlobalGuards`, ...) on jobs
   * too, as Nest microservices do. Off by default: jobs run the module's job guards plus the
   * guards, interceptors and pipes declared on the processor class or method. When on, global
   * HTTP guards must step aside for jobs with `isTenantJobContext(context)`.
   * @default false
   */
  globalEnhancers?: boolean;
  /** Signing of the `_tenant` envelope (off by default). */
  envelope?: TenantEnvelopeOptions;
  /**
   * Tiers by name (`{ free: { weight: 1, rateLimit: { max: 20, per: 60_000 } }, pro: { ... } }`):
   * weight, cap, rate limit, lane weights and dedicated pools in one place. A tenant's tier is
   * its directory record's `tier`; the record's own fields override the tier's.
   */
  tiers?: Record<string, TenantTierOptions>;
  /**
   * How long a tenant's tier and overrides read from the directory are cached, in ms
   * (`TenantTiers.refresh(tenantId)` applies a change at once).
   * @default 30000
   */
  tierCacheMs?: number;
  /**
   * Longest wait of `add`/`addBulk`/`addForTenant` for Redis, in ms (100-600000). Past it the call
   * fails with `EnqueueUnavailableError`; a call that fails this way is never written later (the
   * producer's connection keeps no offline queue and resends nothing).
   * @default 5000
   */
  enqueueTimeoutMs?: number;
  /**
   * What the app does when Redis does not answer at boot. `'optional'`: it finishes
   * bootstrapping (the HTTP port opens); workers, `@TenantCron` drivers and the scheduler connect
   * in the background and start once Redis answers, logging one line per outage; enqueues fail
   * with `EnqueueUnavailableError` meanwhile. `'required'`: bootstrapping fails within
   * `enqueueTimeoutMs` with `RedisUnavailableAtBootError` and nothing is left connecting.
   * @default 'optional'
   */
  redisAtBoot?: 'optional' | 'required';
  /**
   * Longest wait of the module's shutdown (`app.close()`, SIGTERM with `enableShutdownHooks()`),
   * in ms (100-600000): workers finish their active jobs, then the connections close. Past it the
   * workers are closed by force (their active jobs go back to BullMQ as stalled and run again)
   * and the connections are dropped, whatever Redis does.
   * @default 10000
   */
  shutdownTimeoutMs?: number;
  /**
   * BullMQ's telemetry (e.g. `new BullMQOtel({ tracerName: 'my-app' })` from `bullmq-otel`),
   * given to every queue and worker the module creates. Each job carries the trace context it was enqueued in (also
   * through the fair gate), so BullMQ's `process` span continues the request's trace; that span
   * and the enqueuing span get `tenant.id` (the tenant's metric label, bounded like
   * `metrics.maxTenantLabels`).
   * @default undefined (no telemetry)
   */
  telemetry?: Telemetry;
  /**
   * What runs in each job's CLS context before the handler, as `@UseCls()` would: CLS plugin
   * hooks, `CLS_ID` (the correlation id), a `setup`, proxy providers. See `TenantJobClsOptions`.
   */
  cls?: TenantJobClsOptions;
}

/** `resolution` after validation, defaults filled in. */
export interface ResolvedResolutionOptions {
  order: TenantResolverName[];
  header: string;
  jwtClaim: string;
  pathParam: string;
  subdomainBaseDomains: string[];
  custom?: (req: any) => string | undefined;
  mount: boolean;
}
