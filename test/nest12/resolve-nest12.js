// Loaded into every Node process of `npm run test:nest12` (NODE_OPTIONS, set by jest.config.js),
// so that worker processes the suites fork resolve `@nestjs/*` to this folder's Nest 12 too. Such
// a child is plain Node: our CommonJS code `require`s Nest 12's ES modules through require(esm),
// exactly as in a Nest 12 app. Jest's own module loader does not use this (see moduleNameMapper).
const Module = require('node:module');
const { modules, request: NEST } = require('./packages');

const nest12 = [modules];
const resolve = Module._resolveFilename;

Module._resolveFilename = function (request, parent, isMain, options) {
  if (NEST.test(request))
    return resolve.call(this, request, parent, isMain, { ...options, paths: nest12 });
  return resolve.call(this, request, parent, isMain, options);
};
