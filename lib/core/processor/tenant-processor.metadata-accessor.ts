import { Injectable, Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  TENANT_PROCESSOR_METADATA,
  TENANT_WORKER_EVENT_METADATA,
} from '../../tenant-queue.constants';
import { TenantProcessorMetadata } from './tenant-processor.decorator';
import { TenantWorkerEvent } from './on-tenant-worker-event.decorator';

@Injectable()
export class TenantProcessorMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  getProcessor(target: Type): TenantProcessorMetadata | undefined {
    return this.reflector.get(TENANT_PROCESSOR_METADATA, target);
  }

  getWorkerEvent(method: (...args: any[]) => unknown): TenantWorkerEvent | undefined {
    return this.reflector.get(TENANT_WORKER_EVENT_METADATA, method);
  }
}
