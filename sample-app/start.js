// `npm run sample`: runs the TypeScript sample app directly (no build step).
require('ts-node').register({
  transpileOnly: true,
  project: require('path').join(__dirname, '..', 'tsconfig.json'),
});
require('./main.ts');
