export * from './database-demo.module';
