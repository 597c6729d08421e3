export * from './actor.interface';
export * from './tenant-envelope.interface';
export * from './tenant-job.interface';
export * from './tenant-queue-options.interface';
export * from './register-queue-options.interface';
export * from './tenant-directory.interface';
export * from './tenant-scheduler-options.interface';
export * from './tenant-queue-ports.interface';
