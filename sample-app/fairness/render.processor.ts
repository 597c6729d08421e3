import { TenantJob, TenantProcessor, TenantWorkerHost } from '../../lib';

export const RENDERS_QUEUE = 'renders';

/** A video takes 100x a thumbnail's time (scaled down from seconds to fit the demo). */
export const RENDER_MS = { video: 200, thumbnail: 2 } as const;

export interface RenderJob {
  asset: string;
}

/** Renders one asset; the job name (`video` or `thumbnail`) says how long it takes. */
@TenantProcessor(RENDERS_QUEUE, { concurrency: 2, removeOnComplete: { count: 1000 } })
export class RenderProcessor extends TenantWorkerHost {
  async process(job: TenantJob<RenderJob>) {
    const ms = RENDER_MS[job.name as keyof typeof RENDER_MS] ?? 2;
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { rendered: job.data.asset };
  }
}
