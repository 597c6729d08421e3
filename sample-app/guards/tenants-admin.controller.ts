import {
  Controller,
  Delete,
  HttpCode,
  Inject,
  NotImplementedException,
  Param,
  Post,
  Put,
} from '@nestjs/common';
import { EntitlementChecker, InMemoryTenantDirectory, TenantDirectory } from '../../lib';
import { DemoEntitlements } from './demo-ports';

/**
 * Demo back office: suspend and resume a tenant, grant and revoke a feature. A real app does this
 * in its own tenant store, behind its own admin auth; the module only reads it.
 */
@Controller('admin/tenants/:tenantId')
export class TenantsAdminController {
  constructor(
    @Inject(TenantDirectory) private readonly directory: TenantDirectory,
    @Inject(EntitlementChecker) private readonly entitlements: EntitlementChecker,
  ) {}

  @Post('suspend')
  @HttpCode(204)
  suspend(@Param('tenantId') tenantId: string): void {
    this.demoDirectory().setStatus(tenantId, 'suspended');
  }

  @Post('resume')
  @HttpCode(204)
  resume(@Param('tenantId') tenantId: string): void {
    this.demoDirectory().setStatus(tenantId, 'active');
  }

  @Put('entitlements/:feature')
  @HttpCode(204)
  grant(@Param('tenantId') tenantId: string, @Param('feature') feature: string): void {
    this.demoEntitlements().grant(tenantId, feature);
  }

  @Delete('entitlements/:feature')
  @HttpCode(204)
  revoke(@Param('tenantId') tenantId: string, @Param('feature') feature: string): void {
    this.demoEntitlements().revoke(tenantId, feature);
  }

  private demoDirectory(): InMemoryTenantDirectory {
    if (this.directory instanceof InMemoryTenantDirectory) return this.directory;
    throw new NotImplementedException('Configure guardsDemoPorts() to use the demo directory.');
  }

  private demoEntitlements(): DemoEntitlements {
    if (this.entitlements instanceof DemoEntitlements) return this.entitlements;
    throw new NotImplementedException('Configure guardsDemoPorts() to use the demo entitlements.');
  }
}
