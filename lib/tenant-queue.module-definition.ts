import { ConfigurableModuleBuilder } from '@nestjs/common';
import { TenantQueueModuleOptions } from './interfaces/tenant-queue-options.interface';

export const {
  ConfigurableModuleClass: ConfigurableTenantQueueModule,
  MODULE_OPTIONS_TOKEN: TENANT_QUEUE_MODULE_OPTIONS,
  OPTIONS_TYPE: TENANT_QUEUE_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: TENANT_QUEUE_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<TenantQueueModuleOptions>()
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createTenantQueueOptions')
  .build();
