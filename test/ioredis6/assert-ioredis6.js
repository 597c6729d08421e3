// Fails the run at once if `ioredis` does not resolve to ioredis 6 (a mapper that silently fell
// back to the repository's ioredis 5 would make `test:ioredis6` prove nothing).
const { version } = require('ioredis/package.json');
if (!version.startsWith('6.')) {
  throw new Error(
    `test:ioredis6 expected ioredis 6, got ${version}: run npm ci --prefix test/ioredis6`,
  );
}
