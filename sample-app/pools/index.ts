export * from './pools-demo.module';
