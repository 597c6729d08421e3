import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';

/**
 * Demo guard for the dashboard: HTTP Basic auth as `admin:<DASHBOARD_PASSWORD>`. The browser
 * sends the credentials with the page's own fetch calls too, so the buttons work once logged in.
 */
@Injectable()
export class BasicAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const password = process.env.DASHBOARD_PASSWORD;
    const header = context.switchToHttp().getRequest().headers?.authorization;
    const res = context.switchToHttp().getResponse();
    if (password && typeof header === 'string' && header.startsWith('Basic ')) {
      const given = Buffer.from(header.slice(6), 'base64');
      const expected = Buffer.from(`admin:${password}`);
      if (
        given.length === expected.length &&
        timingSafeEqual(new Uint8Array(given), new Uint8Array(expected))
      )
        return true;
    }
    res.setHeader('WWW-Authenticate', 'Basic realm="tenant queues"');
    throw new UnauthorizedException();
  }
}
