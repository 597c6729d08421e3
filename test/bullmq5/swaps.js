// The copies test:bullmq5 swaps (see resolve-bullmq5.js), shared with jest.config.js's mapper.
const { join } = require('node:path');

const here = join(__dirname, 'node_modules');
const root = join(__dirname, '..', '..', 'node_modules');
/** Package name -> [the folder a resolution lands in, the folder it is moved to]. */
const swaps = {
  bullmq: [join(root, 'bullmq'), join(here, 'bullmq')],
  'bullmq-otel': [join(root, 'bullmq-otel'), join(here, 'bullmq-otel')],
  ioredis: [join(here, 'ioredis'), join(root, 'ioredis')],
  '@opentelemetry/api': [join(here, '@opentelemetry', 'api'), join(root, '@opentelemetry', 'api')],
};

module.exports = { swaps };
