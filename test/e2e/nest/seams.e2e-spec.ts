import { Injectable, Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import type { Worker } from 'bullmq';
import {
  TenantJob,
  TenantProcessor,
  TenantQueueModule,
  TenantQueueRegistry,
  TenantWorkerHost,
} from '../../../lib';
import {
  JobRunContext,
  JobStage,
  TenantJobPipeline,
  WorkerPlugin,
} from '../../../lib/core/processor/tenant-job-pipeline';
import { TenantJobStage } from '../../../lib/core/processor/tenant-job-stage.decorator';
import { TenantWorkerPlugin } from '../../../lib/core/processor/tenant-worker-plugin.decorator';
import { PreparedJob } from '../../../lib/core/queues/job-dispatcher.interface';
import { EnqueueObserver } from '../../../lib/core/queues/queue-feature.interface';
import {
  TenantEnqueueObserver,
  TenantQueueFeature,
} from '../../../lib/core/queues/queue-seams.decorator';
import { TenantQueueDefinition } from '../../../lib/core/types/queue-definition.interface';
import { enqueue } from '../../support/jobs';
import { uniquePrefix } from '../../support/redis-url';
import { testRootImports } from '../../support/test-module';
import { waitFor } from '../../support/wait';

jest.setTimeout(60_000);

const seen: string[] = [];
const checked: string[] = [];

/** Listed before `Outer` in the module, declared inside it: the declared order wins. */
@Injectable()
@TenantJobStage('observe', 25)
class InnerObserveStage implements JobStage {
  run(context: JobRunContext, next: () => Promise<unknown>) {
    seen.push('observe 25');
    return next();
  }
}

@Injectable()
@TenantJobStage('observe', 15)
class OuterObserveStage implements JobStage {
  run(context: JobRunContext, next: () => Promise<unknown>) {
    seen.push('observe 15');
    return next();
  }
}

/** A worker plugin between the metrics recorder's (30) and the dead letters' (40). */
@Injectable()
@TenantWorkerPlugin(35)
class AppWorkerPlugin implements WorkerPlugin {
  attach(worker: Worker, definition: TenantQueueDefinition) {
    seen.push(`attach ${definition.name}`);
  }
}

/** A queue feature before fairness (10): its slice checks each queue as it registers. */
@Injectable()
@TenantQueueFeature(5, {
  checkQueue: (options, earlier) =>
    checked.push(`${options.name} after [${earlier.map((queue) => queue.name).join(',')}]`),
})
@TenantEnqueueObserver(5)
class AppQueueFeature implements EnqueueObserver {
  enqueued(definition: TenantQueueDefinition, jobs: PreparedJob[]) {
    seen.push(`enqueued ${jobs.length} on ${definition.name}`);
  }
}

@TenantProcessor('seams')
class SeamsProcessor extends TenantWorkerHost {
  async process(job: TenantJob) {
    seen.push(`handler ${job.name}`);
  }
}

/** Registered in a module Nest builds before the root and its features. */
@Module({
  imports: [TenantQueueModule.registerQueue({ name: 'seams-budget', budget: 'b', fairness: true })],
})
class EarlyQueueModule {}

describe('seams: every plug-in point is a decorated provider, found by discovery', () => {
  let moduleRef: TestingModule;
  const prefix = uniquePrefix('seams');

  beforeAll(async () => {
    @Module({
      imports: [
        EarlyQueueModule,
        ...testRootImports(prefix),
        TenantQueueModule.registerQueue({ name: 'seams' }),
      ],
      providers: [
        InnerObserveStage,
        AppWorkerPlugin,
        OuterObserveStage,
        AppQueueFeature,
        SeamsProcessor,
      ],
    })
    class AppModule {}
    moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    // Checked while Nest built the queue providers, before any lifecycle hook.
    expect(checked).toEqual(['seams-budget after []', 'seams after [seams-budget]']);
    await moduleRef.init();
  });

  afterAll(async () => {
    await moduleRef?.close();
  });

  it("applies the features' option slices to a queue built before the features", () => {
    const budget = moduleRef.get(TenantQueueRegistry).getQueue('seams-budget');
    expect(budget.definition.bullPrefix).toBe(`{${prefix}:~budget:b}:seams-budget`);
  });

  it('orders stages by phase, then by declared order, not by where providers are listed', () => {
    const stages = moduleRef.get(TenantJobPipeline).stages.map((stage) => stage.constructor.name);
    expect(stages).toEqual([
      'TenantMetricsRecorder',
      'OuterObserveStage',
      'TenantSpanStage',
      'InnerObserveStage',
      'FairReleaseStage',
      'JobClsSetup',
      'TenantJobGuardsStage',
      'TimeoutStage',
      'IdempotencyStage',
    ]);
  });

  it('attaches worker plugins in their declared order', () => {
    const plugins = moduleRef.get(TenantJobPipeline).workerPlugins;
    expect(plugins.map((plugin) => plugin.constructor.name)).toEqual([
      'JobCancellations',
      'FairGateRegistry',
      'TenantMetricsRecorder',
      'AppWorkerPlugin',
      'DeadLetterWorkerPlugin',
    ]);
    expect(seen).toContain('attach seams');
  });

  it('runs a job through the stages in that order and tells the enqueue observers', async () => {
    seen.length = 0;
    await enqueue(moduleRef, 'seams', 'acme', [{}], undefined, 'ordered');
    await waitFor(() => seen.includes('handler ordered'), 'the job to run');
    // The observers hear of a write once Redis answered it; a worker may start the job before
    // that answer reaches the producer, so only the stages' order is fixed.
    expect(seen.filter((line) => !line.startsWith('enqueued'))).toEqual([
      'observe 15',
      'observe 25',
      'handler ordered',
    ]);
    expect(seen.filter((line) => line.startsWith('enqueued'))).toEqual(['enqueued 1 on seams']);
  });
});
