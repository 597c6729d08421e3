export * from './pool-options';
export * from './pool-router';
export * from './pool-ids.script';
