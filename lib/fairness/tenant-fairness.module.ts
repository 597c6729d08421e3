import { Module } from '@nestjs/common';
import { TenantQueueControls, TenantQueueStateSource } from '../metrics';
import { FairGateRegistry } from './fair-gate.registry';
import { FairQueueFeature } from './fair-queue.feature';
import { FairReleaseStage } from './fair-release.stage';
import { FairnessStateSource } from './fairness-state.source';
import { TenantFairness } from './tenant-fairness.service';

/**
 * Fair share across tenants on queues with `fairness`: the fair gate (weighted turns, caps, rate
 * limits, lanes, slow lane) and `TenantFairness`; options slice: `registerQueue({ fairness })`.
 */
@Module({
  providers: [
    FairQueueFeature,
    FairGateRegistry,
    // Successes release in the job path, on the queues with a fair gate (`appliesTo`).
    {
      provide: FairReleaseStage,
      useFactory: (gates: FairGateRegistry) => new FairReleaseStage((d) => gates.gateFor(d)),
      inject: [FairGateRegistry],
    },
    TenantFairness,
    FairnessStateSource,
    { provide: TenantQueueStateSource, useExisting: FairnessStateSource },
    { provide: TenantQueueControls, useExisting: FairnessStateSource },
  ],
  exports: [
    FairQueueFeature,
    FairGateRegistry,
    TenantFairness,
    TenantQueueStateSource,
    TenantQueueControls,
  ],
})
export class TenantFairnessModule {}
