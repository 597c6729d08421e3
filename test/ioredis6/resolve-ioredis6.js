// Loaded with --require in the worker processes the suites fork: their `ioredis` (the library's
// and BullMQ's) resolves to this folder's ioredis 6, as it does inside jest.
const Module = require('node:module');
const { join } = require('node:path');

const ioredis = join(__dirname, 'node_modules', 'ioredis');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'ioredis') return resolve.call(this, ioredis, ...rest);
  if (request.startsWith('ioredis/'))
    return resolve.call(this, ioredis + request.slice(7), ...rest);
  return resolve.call(this, request, ...rest);
};
