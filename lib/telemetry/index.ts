export { TENANT_ID_ATTRIBUTE } from './otel-api';
