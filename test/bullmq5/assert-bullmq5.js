// Fails the run at once if `bullmq` does not resolve to bullmq 5 (a mapper that silently fell
// back to the repository's bullmq 6 would make `test:bullmq5` prove nothing).
const { version } = require('bullmq/package.json');
if (!version.startsWith('5.')) {
  throw new Error(`test:bullmq5 expected bullmq 5, got ${version}: run npm ci --prefix test/bullmq5`);
}
if (typeof require('bullmq').Queue.prototype.getBackend === 'function') {
  throw new Error('test:bullmq5 loaded a BullMQ with getBackend() (bullmq 6), not bullmq 5');
}
