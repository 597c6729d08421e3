export { TenantQueueDashboardModule } from './tenant-queue-dashboard.module';
export type { TenantQueueDashboardOptions } from './dashboard-options.interface';
export { DASHBOARD_ACTION_HEADER } from './dashboard-options.interface';
