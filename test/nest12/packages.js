// The NestJS 12 packages of this folder's install, which the run resolves `@nestjs/<name>` to.
const { join } = require('node:path');

const names = [
  'bull-shared',
  'bullmq',
  'common',
  'core',
  'platform-express',
  'terminus',
  'testing',
];

module.exports = {
  names,
  /** Where they are installed. */
  modules: join(__dirname, 'node_modules'),
  /** `@nestjs/<name>` or `@nestjs/<name>/<file>`, one of `names`; group 1 is the name. */
  request: new RegExp(`^@nestjs/(${names.join('|')})(?:/|$)`),
};
