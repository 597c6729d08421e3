export * from './containment-demo.module';
