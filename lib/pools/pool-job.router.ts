import { Inject, Injectable } from '@nestjs/common';
import { TenantRouter } from '../core/queues/queue-seams.decorator';
import { TENANT_QUEUE_BACKEND, TenantQueueBackend } from '../core/queues/queue-backend';
import { TenantQueueDefinition } from '../core/types/queue-definition.interface';
import { JobRoute, JobRouter } from '../core/queues/queue-feature.interface';
import { TenantTiers } from '../core/tenants/tenant-tiers.service';
import { PooledQueueOptions } from './pool-queue-options.interface';
import { RedisPoolIdLedger } from './pool-ids.script';
import { resolvePools } from './pool-options';
import { PoolRouter } from './pool-router';

/** Dedicated pools: which pools a queue has, and which pool takes each job (`PoolRouter`). */
@Injectable()
@TenantRouter({
  poolsOf: (options, root) => resolvePools(options as PooledQueueOptions, root.tiers),
})
export class PoolJobRouter implements JobRouter {
  constructor(
    @Inject(TENANT_QUEUE_BACKEND) private readonly backend: TenantQueueBackend,
    private readonly tiers: TenantTiers,
  ) {}

  routeFor(definition: TenantQueueDefinition): JobRoute {
    const client = this.backend.stateClient();
    const router = new PoolRouter(
      definition.name,
      new Set(definition.pools),
      (definition.registered as PooledQueueOptions).routing,
      this.tiers,
      client ? new RedisPoolIdLedger(definition, client) : undefined,
    );
    return (jobs, ownIds) => router.route(jobs, ownIds);
  }
}
