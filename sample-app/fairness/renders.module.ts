import { Module } from '@nestjs/common';
import { TenantQueueModule } from '../../lib';
import { RENDERS_QUEUE, RenderProcessor } from './render.processor';
import { RendersController } from './renders.controller';

/**
 * Fair share of worker time: on the `renders` queue a tenant rendering videos (200 ms each) and
 * one rendering thumbnails (2 ms each), both backlogged, get about half of the workers' time
 * each, instead of half of the starts (which would give the videos ~99% of it).
 */
@Module({
  imports: [
    TenantQueueModule.registerQueue({
      name: RENDERS_QUEUE,
      fairness: { share: 'time' }, // a turn costs the job's expected run time, not one job
    }),
  ],
  controllers: [RendersController],
  providers: [RenderProcessor],
})
export class RendersModule {}
