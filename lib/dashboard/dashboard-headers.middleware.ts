import { Injectable, NestMiddleware } from '@nestjs/common';

/**
 * Headers of every dashboard response (page, JSON, refusals): never framed (clickjacking of the
 * pause/resume buttons), never sniffed into another type, never cached. The page's own CSP
 * (set on its route) keeps `frame-ancestors 'none'`.
 */
@Injectable()
export class DashboardHeadersMiddleware implements NestMiddleware {
  use(_req: unknown, res: { setHeader(name: string, value: string): void }, next: () => void) {
    res.setHeader('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
    res.setHeader('x-frame-options', 'DENY');
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('cache-control', 'no-store');
    next();
  }
}
