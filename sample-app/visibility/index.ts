export { VisibilityDemoModule } from './visibility-demo.module';
export type { VisibilityDemoOptions } from './visibility-demo.module';
