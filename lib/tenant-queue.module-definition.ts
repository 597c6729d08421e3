import { ConfigurableModuleBuilder } from '@nestjs/common';
import { PORT_TOKENS, portProviders } from './guards/port-providers';
import { TenantQueueModuleOptions } from './interfaces/tenant-queue-options.interface';
import { TenantQueuePortOptions } from './guards/tenant-queue-ports.interface';
import { TENANT_QUEUE_MODULE_OPTIONS } from './core/options/core.options';

export { TENANT_QUEUE_MODULE_OPTIONS };

/**
 * The root module's definition: `typeof TENANT_QUEUE_OPTIONS_TYPE` is the argument of
 * `forRoot(...)`, `typeof TENANT_QUEUE_ASYNC_OPTIONS_TYPE` that of `forRootAsync(...)`.
 * @publicApi those two names; the module class and the options token stay internal
 */
export const {
  ConfigurableModuleClass: ConfigurableTenantQueueModule,
  OPTIONS_TYPE: TENANT_QUEUE_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: TENANT_QUEUE_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<TenantQueueModuleOptions>({
  optionsInjectionToken: TENANT_QUEUE_MODULE_OPTIONS,
})
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createTenantQueueOptions')
  // Ports are "extras": known when the module is defined, so each becomes a provider of its own
  // with forRoot and forRootAsync alike (the keys must be listed for Nest to strip them).
  .setExtras<TenantQueuePortOptions>(
    { directory: undefined, entitlementChecker: undefined, actorPermissionChecker: undefined },
    (definition, ports) => ({
      ...definition,
      providers: [...(definition.providers ?? []), ...portProviders(ports)],
      exports: [...(definition.exports ?? []), TENANT_QUEUE_MODULE_OPTIONS, ...PORT_TOKENS],
    }),
  )
  .build();
