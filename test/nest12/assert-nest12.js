// Fails every suite of the NestJS 12 run that would silently load another Nest.
const { names } = require('./packages');

for (const name of names) {
  const { version } = require(`@nestjs/${name}/package.json`);
  if (!version.startsWith('12.')) {
    throw new Error(
      `test:nest12 loaded @nestjs/${name} ${version}; run npm ci --prefix test/nest12`,
    );
  }
}
