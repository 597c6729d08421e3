// `npm run test:nest12`: the library's tests against NestJS 12 (this folder's package.json),
// everything else from the repository's install. Nest 12 ships ES modules only; the library is
// CommonJS, so a Nest 12 app loads Nest through Node's require(esm). Jest has no require(esm):
// the transform below turns Nest 12's modules into CommonJS, and every `@nestjs/*` import (the
// library's, the tests', nestjs-cls's) resolves to this folder's Nest 12.
const { join } = require('node:path');
const { variantConfig, e2eFolders, selected } = require('../support/variant-jest.config');
const { names, modules } = require('./packages');

const nest12 = join(modules, '@nestjs');
const nestNames = names.join('|');

// Worker processes the suites fork are plain Node: the hook points their `@nestjs/*` at Nest 12.
module.exports = variantConfig(join(__dirname, 'resolve-nest12.js'), {
  // What differs under Nest 12: DI and wiring, discovery, ExternalContextCreator, middleware
  // routes, lifecycle order, the testing module, packaging, the @nestjs/bullmq bridge (test/e2e/nest)
  // and the sample apps' boot (test/e2e/samples); the unit specs run whole (they are quick) but
  // zoned-cron's (luxon and cron-parser only, 18 s on a slow host).
  testMatch: [
    ...selected(['<rootDir>/lib/**/*.spec.ts', ...e2eFolders('nest', 'samples')]),
    '<rootDir>/test/nest12/*.nest12-spec.ts',
  ],
  testPathIgnorePatterns: ['/node_modules/', '/lib/scheduler/zoned-cron\\.spec\\.ts$'],
  modulePathIgnorePatterns: [],
  setupFiles: [join(__dirname, 'assert-nest12.js')],
  transform: { '^.+\\.(ts|js)$': join(__dirname, 'transform.js') },
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/)'],
  moduleNameMapper: {
    [`^@nestjs/(${nestNames})$`]: `${nest12}/$1`,
    [`^@nestjs/(${nestNames})/(.*)$`]: `${nest12}/$1/$2`,
  },
});
