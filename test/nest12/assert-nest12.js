// Fails every suite of the NestJS 12 run that would silently load another Nest.
for (const name of ['common', 'core', 'testing', 'platform-express']) {
  const { version } = require(`@nestjs/${name}/package.json`);
  if (!version.startsWith('12.')) {
    throw new Error(
      `test:nest12 loaded @nestjs/${name} ${version}; run npm ci --prefix test/nest12`,
    );
  }
}
