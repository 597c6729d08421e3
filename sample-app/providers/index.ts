export * from './providers-demo.module';
