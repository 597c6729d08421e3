export { TenantBullMqModule } from './tenant-bullmq.module';
