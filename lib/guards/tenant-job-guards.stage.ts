import { TenantJobStage } from '../core/processor/tenant-job-stage.decorator';
import { Inject, Injectable, OnModuleInit, Type } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { JobCancelledError, PortNotConfiguredError } from '../core/errors';
import {
  ActorPermissionChecker,
  EntitlementChecker,
} from '../core/types/tenant-directory.interface';
import { TenantEnvelope } from '../core/types/tenant-envelope.interface';
import { JobRunContext, JobStage } from '../core/processor/tenant-job-pipeline';
import { TenantProcessorMetadataAccessor } from '../core/processor/tenant-processor.metadata-accessor';
import { TenantWorkerHost } from '../core/processor/tenant-worker-host';
import { Messages } from '../tenant-queue.messages';
import { ResolvedGuardOptions, TENANT_GUARD_OPTIONS } from './tenant-guard.options';
import { callPort } from './call-port';
import {
  UnconfiguredActorPermissionChecker,
  UnconfiguredEntitlementChecker,
} from '../core/tenants/default-ports';
import {
  REQUIRES_ACTOR_PERMISSION_METADATA,
  REQUIRES_ENTITLEMENT_METADATA,
} from './job-guards.constants';
import { TenantStatusService } from './tenant-status.service';

interface Requirements {
  features: string[];
  permissions: string[];
}

/** Each checker port the guards call: the requirement that needs it, and how it is configured. */
const PORTS = [
  {
    needs: 'features',
    field: 'entitlements',
    unconfigured: UnconfiguredEntitlementChecker,
    name: 'EntitlementChecker',
    option: 'entitlementChecker',
    decorator: '@RequiresEntitlement',
  },
  {
    needs: 'permissions',
    field: 'permissions',
    unconfigured: UnconfiguredActorPermissionChecker,
    name: 'ActorPermissionChecker',
    option: 'actorPermissionChecker',
    decorator: '@RequiresActorPermission',
  },
] as const;

/**
 * @internal The module's own job guards, run before every handler (and before Nest guards):
 * tenant present, tenant active, entitlements, actor permissions. A denial throws
 * `JobCancelledError`; a port that fails throws `TenantPortUnavailableError` (retried).
 */
@Injectable()
@TenantJobStage('admission', 10)
export class TenantJobGuardsStage implements JobStage, OnModuleInit {
  private readonly requirements = new Map<Type, Requirements>();

  constructor(
    private readonly status: TenantStatusService,
    @Inject(EntitlementChecker) private readonly entitlements: EntitlementChecker,
    @Inject(ActorPermissionChecker) private readonly permissions: ActorPermissionChecker,
    @Inject(TENANT_GUARD_OPTIONS) private readonly guardOptions: ResolvedGuardOptions,
    private readonly reflector: Reflector,
    private readonly discovery: DiscoveryService,
    private readonly accessor: TenantProcessorMetadataAccessor,
  ) {}

  /** Fails the bootstrap, before any worker starts, when a processor needs a missing checker. */
  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const metatype = wrapper.metatype as Type | undefined;
      if (!metatype || !this.accessor.getProcessor(metatype)) continue;
      const needs = this.requirementsOf(metatype);
      for (const port of PORTS) {
        if (needs[port.needs].length > 0 && this[port.field] instanceof port.unconfigured) {
          throw new PortNotConfiguredError(
            Messages.portNotConfigured(port.name, port.option, metatype.name, port.decorator),
          );
        }
      }
    }
  }

  /**
   * Left out of a processor's stages when it cannot refuse anything: the permissive default
   * directory never refuses, and the processor requires no entitlement and no permission.
   */
  appliesTo(_definition: unknown, _options: unknown, host: TenantWorkerHost): boolean {
    const needs = this.requirementsOf(host.constructor as Type);
    return this.status.canRefuse || needs.features.length > 0 || needs.permissions.length > 0;
  }

  run(context: JobRunContext, next: () => Promise<unknown>): Promise<unknown> {
    const needs = this.requirementsOf(context.host.constructor as Type);
    // The permissive default directory never refuses: with nothing else required, skip the
    // lookup and the async frame.
    if (!this.status.canRefuse && needs.features.length === 0 && needs.permissions.length === 0) {
      return next();
    }
    return this.guarded(context, next, needs);
  }

  private async guarded(
    context: JobRunContext,
    next: () => Promise<unknown>,
    needs: ReturnType<TenantJobGuardsStage['requirementsOf']>,
  ): Promise<unknown> {
    const envelope = context.envelope;
    if (envelope === undefined) {
      // A system job without a tenant (the runner already cancelled tenant-scoped ones).
      if (needs.features.length === 0 && needs.permissions.length === 0) return next();
      // Enqueued without a tenant on purpose (a system job name, a queue not tenant-scoped), yet
      // entitlements and permissions are a tenant's: nothing to check them against.
      throw new JobCancelledError(
        'MISSING_TENANT',
        Messages.tenantlessJobRequires(
          context.definition.name,
          context.job.name,
          context.host.constructor.name,
          [
            ...needs.features.map((feature) => `@RequiresEntitlement('${feature}')`),
            ...needs.permissions.map((permission) => `@RequiresActorPermission('${permission}')`),
          ].join(', '),
        ),
      );
    }
    const verdict = await this.status.check(envelope.tenantId);
    if (!verdict.allowed) throw new JobCancelledError(verdict.reason, verdict.message);
    for (const feature of needs.features) await this.checkEntitlement(envelope.tenantId, feature);
    for (const permission of needs.permissions) await this.checkActor(envelope, permission);
    return next();
  }

  private async checkEntitlement(tenantId: string, feature: string): Promise<void> {
    const allowed = await callPort('EntitlementChecker', this.guardOptions.portTimeoutMs, () =>
      this.entitlements.hasEntitlement(tenantId, feature),
    );
    if (allowed !== true) {
      throw new JobCancelledError(
        'NOT_ENTITLED',
        allowed === false
          ? Messages.notEntitled(tenantId, feature)
          : Messages.portAnswerNotBoolean(
              `EntitlementChecker.hasEntitlement("${tenantId}", "${feature}")`,
              allowed,
            ),
      );
    }
  }

  private async checkActor(envelope: TenantEnvelope, permission: string): Promise<void> {
    const { tenantId, actorType, actorId } = envelope;
    if (actorType === 'system') return;
    if (actorType === 'anonymous' || actorId === undefined) {
      throw new JobCancelledError(
        'ACTOR_NOT_PERMITTED',
        Messages.anonymousActor(tenantId, permission),
      );
    }
    const actor = { type: actorType, id: actorId };
    const allowed = await callPort('ActorPermissionChecker', this.guardOptions.portTimeoutMs, () =>
      this.permissions.can(actor, permission, tenantId),
    );
    if (allowed !== true) {
      throw new JobCancelledError(
        'ACTOR_NOT_PERMITTED',
        allowed === false
          ? Messages.actorNotPermitted(tenantId, `${actorType} "${actorId}"`, permission)
          : Messages.portAnswerNotBoolean(
              `ActorPermissionChecker.can(${actorType} "${actorId}", "${permission}", "${tenantId}")`,
              allowed,
            ),
      );
    }
  }

  private requirementsOf(metatype: Type): Requirements {
    let needs = this.requirements.get(metatype);
    if (!needs) {
      const targets = requirementTargets(metatype);
      needs = {
        features: unique(
          this.reflector.getAllAndMerge<string[]>(REQUIRES_ENTITLEMENT_METADATA, targets),
        ),
        permissions: unique(
          this.reflector.getAllAndMerge<string[]>(REQUIRES_ACTOR_PERMISSION_METADATA, targets),
        ),
      };
      this.requirements.set(metatype, needs);
    }
    return needs;
  }
}

/**
 * Where a processor's requirements are declared: the class and its `process`, then each class it
 * extends and the `process` that one defines. They add up: a subclass that overrides `process` (or
 * has requirements of its own) keeps its base's, as a requirement is never dropped by accident.
 */
function requirementTargets(metatype: Type): Type[] {
  const targets: Type[] = [];
  for (
    let type: unknown = metatype;
    typeof type === 'function' && type !== Function.prototype;
    type = Object.getPrototypeOf(type)
  ) {
    const process = Object.getOwnPropertyDescriptor((type as Type).prototype ?? {}, 'process');
    if (typeof process?.value === 'function') targets.push(process.value as Type);
    targets.push(type as Type);
  }
  return targets;
}

function unique(values: string[] | undefined): string[] {
  return [...new Set(values ?? [])];
}
