import tseslint from 'typescript-eslint';

/**
 * The kernel (lib/core) imports only itself, the constants and the messages: never a feature.
 * One block per depth, since the rule matches import strings, not resolved paths.
 */
const kernelOnly = (up) => ({
  files: [`lib/core/${'*/'.repeat(up - 1)}*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            group: [
              `${'../'.repeat(up)}*`,
              `!${'../'.repeat(up)}tenant-queue.constants`,
              `!${'../'.repeat(up)}tenant-queue.messages`,
            ],
            message:
              'lib/core is the kernel and imports no feature: declare a seam in core ' +
              '(a stage phase, QueueFeature, JobRouter, WorkerPlugin, the queue backend) and ' +
              'plug the feature into it from its own folder.',
          },
        ],
      },
    ],
  },
});

/**
 * A feature folder (every folder of lib/ but the kernel) imports another feature only through
 * that feature's index.ts; the kernel (lib/core) is importable anywhere by path. One block per
 * depth (a feature's own subfolders, e.g. fairness/modes/lanes/, import within it freely).
 */
const featureThroughIndex = (depth) => ({
  files: [`lib/*/${'*/'.repeat(depth - 1)}*.ts`],
  ignores: ['lib/core/**'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            group: [`${'../'.repeat(depth)}*/**`, `!${'../'.repeat(depth)}core/**`],
            message:
              "A feature imports another feature only through its index.ts: import from '../<feature>' " +
              'and export what is needed there (marked @internal when it is not public API), or ' +
              'move the shared piece to lib/core.',
          },
        ],
      },
    ],
  },
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '**/*.js', '!eslint.config.mjs'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  kernelOnly(1),
  kernelOnly(2),
  kernelOnly(3),
  featureThroughIndex(1),
  featureThroughIndex(2),
  featureThroughIndex(3),
);
