// Loaded with --require in the worker processes the suites fork: what would load the
// repository's bullmq 6 (and bullmq-otel 2) loads this folder's bullmq 5 (and the bullmq-otel npm
// gives beside it), and what would load this folder's own ioredis / @opentelemetry/api loads the
// repository's, so one copy of each is used, as in an app whose npm deduplicated them. A copy
// nested elsewhere (a test's second BullMQ) is left alone. jest.config.js maps the same names.
const Module = require('node:module');
const { sep } = require('node:path');

const { swaps } = require('./swaps');

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const found = resolve.call(this, request, ...rest);
  for (const [name, [from, to]] of Object.entries(swaps)) {
    if (!found.startsWith(from + sep)) continue;
    // The package (or one of its subpaths) as the other copy's own package.json resolves it.
    if (request === name || request.startsWith(name + '/')) {
      return resolve.call(this, to + request.slice(name.length), ...rest);
    }
    return to + found.slice(from.length);
  }
  return found;
};
