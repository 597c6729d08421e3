import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobScope, TenantJob, TenantProcessor, TenantWorkerHost } from '../../lib';
import { TenantStorage } from './tenant-storage';

export const ARCHIVES_QUEUE = 'archives';

export interface ArchiveRequest {
  files: string[];
}

/**
 * Builds an archive in a temp dir and "uploads" it with the tenant's storage client. It injects a
 * durable provider, so Nest resolves it per tenant; `JobScope` removes the temp dir and closes the
 * file when the job ends, even when it throws or times out.
 */
@TenantProcessor(ARCHIVES_QUEUE, { concurrency: 2, timeoutMs: 10_000 })
export class ArchiveProcessor extends TenantWorkerHost {
  constructor(
    private readonly storage: TenantStorage,
    private readonly scope: JobScope,
  ) {
    super();
  }

  async process(job: TenantJob<ArchiveRequest>) {
    const dir = await mkdtemp(join(tmpdir(), `archive-${job.tenant?.tenantId}-`));
    this.scope.defer(() => rm(dir, { recursive: true, force: true }));
    await job.updateProgress({ tempDir: dir });
    const manifest = this.scope.use(await open(join(dir, 'manifest.json'), 'w'));
    await manifest.writeFile(JSON.stringify({ files: job.data.files }));
    if (job.data.files.includes('corrupt.bin')) throw new Error('corrupt.bin cannot be archived');
    const { size } = await stat(join(dir, 'manifest.json'));
    return {
      key: `${this.storage.bucket}/${job.id}.zip`,
      bytes: size,
      storageInstance: this.storage.instanceId,
    };
  }
}
