// Jest transform for the NestJS 12 run: @swc/jest (TypeScript with decorator metadata, and Nest
// 12's ESM turned into CommonJS, which is what Node's require(esm) gives a CommonJS app). swc
// leaves `import.meta` as it is, a syntax error in CommonJS, so the two forms Nest 12 and
// terminus use are rewritten to their CommonJS equivalents first (without `require`, which a
// module may shadow: terminus declares `const require = createRequire(import.meta.url)`).
const { createTransformer } = require('@swc/jest');

const swc = createTransformer({
  jsc: {
    target: 'es2022',
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    keepClassNames: true,
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
});

const rewrite = (source) =>
  source.includes('import.meta')
    ? source
        .replace(/import\.meta\.url/g, "new URL('file://' + __filename).href")
        .replace(/import\.meta\.resolve\(/g, 'require.resolve(')
    : source;

module.exports = {
  ...swc,
  process: (source, path, options) => swc.process(rewrite(source), path, options),
  getCacheKey: (source, path, options) => swc.getCacheKey(rewrite(source), path, options),
};
