import { Injectable, NestMiddleware } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import { TenantResolver } from './tenant-resolver';
import { TENANT_STATE } from './tenant-state';

/**
 * Puts the request's tenant state into the CLS context. Works before or after nestjs-cls's own
 * middleware: it opens a context when none is active, and nestjs-cls inherits nested contexts.
 * @publicApi
 */
@Injectable()
export class TenantResolutionMiddleware implements NestMiddleware {
  constructor(
    private readonly cls: ClsService,
    private readonly resolver: TenantResolver,
  ) {}

  use(req: unknown, _res: unknown, next: (error?: unknown) => void): void {
    const enter = () => {
      try {
        this.cls.set(TENANT_STATE, this.resolver.begin(req));
      } catch (error) {
        return next(error);
      }
      next();
    };
    if (this.cls.isActive()) enter();
    else this.cls.run(enter);
  }
}
