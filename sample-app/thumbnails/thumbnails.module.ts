import { Module } from '@nestjs/common';
import { TenantQueueModule } from '../../lib';
import { ThumbnailProcessor } from './thumbnail.processor';
import { ThumbnailStore } from './thumbnail.store';
import { UploadsController } from './uploads.controller';

@Module({
  imports: [TenantQueueModule.registerQueue({ name: 'thumbnails' })],
  controllers: [UploadsController],
  providers: [ThumbnailProcessor, ThumbnailStore],
})
export class ThumbnailsModule {}
