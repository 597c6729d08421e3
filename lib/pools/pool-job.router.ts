import { Inject, Injectable } from '@nestjs/common';
import { ResolvedTenantQueueOptions, TENANT_QUEUE_OPTIONS } from '../core/options/core.options';
import { TenantQueuePlugins } from '../core/queues/tenant-queue-plugins';
import { TENANT_QUEUE_BACKEND, TenantQueueBackend } from '../core/queues/queue-backend';
import { CoreQueueOptions, TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { JobRoute, JobRouter } from '../core/queues/queue-feature.interface';
import { TenantTiers } from '../core/tenants/tenant-tiers.service';
import { RegisterTenantQueueOptions } from '../interfaces/register-queue-options.interface';
import { RedisPoolIdLedger } from './pool-ids.script';
import { resolvePools } from './pool-options';
import { PoolRouter } from './pool-router';

/** Dedicated pools: which pools a queue has, and which pool takes each job (`PoolRouter`). */
@Injectable()
export class PoolJobRouter implements JobRouter {
  constructor(
    plugins: TenantQueuePlugins,
    @Inject(TENANT_QUEUE_OPTIONS) private readonly options: ResolvedTenantQueueOptions,
    @Inject(TENANT_QUEUE_BACKEND) private readonly backend: TenantQueueBackend,
    private readonly tiers: TenantTiers,
  ) {
    plugins.useRouter(this);
  }

  poolsOf(options: Readonly<CoreQueueOptions>): string[] {
    return resolvePools(options as RegisterTenantQueueOptions, this.options.tiers);
  }

  routeFor(definition: TenantQueueDefinition): JobRoute {
    const client = this.backend.stateClient();
    const router = new PoolRouter(
      definition.name,
      new Set(definition.pools),
      (definition.registered as RegisterTenantQueueOptions).routing,
      this.tiers,
      client ? new RedisPoolIdLedger(definition, client) : undefined,
    );
    return (jobs, ownIds) => router.route(jobs, ownIds);
  }
}
