import { LoggerService } from '@nestjs/common';
import { TenantJob, TenantProcessor, TenantWorkerHost } from '../../lib';

/** Collects what the module logs at warn level (only the lines that contain `only`, if given). */
export class WarnLog implements LoggerService {
  readonly warns: string[] = [];
  constructor(private readonly only?: string) {}
  log() {}
  error() {}
  debug() {}
  verbose() {}
  warn(message: unknown) {
    if (this.only === undefined || String(message).includes(this.only)) {
      this.warns.push(String(message));
    }
  }
}

/** A processor of queue "media" that returns its job's file. */
@TenantProcessor('media')
export class MediaProcessor extends TenantWorkerHost {
  async process(job: TenantJob<{ file: string }>) {
    return job.data.file;
  }
}
