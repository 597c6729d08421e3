import { Controller, Get, Header } from '@nestjs/common';
import { register } from 'prom-client';

/** Prometheus scrape endpoint (prom-client's global registry, where the module's sink writes). */
@Controller('metrics')
export class MetricsController {
  @Get()
  @Header('content-type', register.contentType)
  metrics(): Promise<string> {
    return register.metrics();
  }
}
