import { readFileSync } from 'node:fs';
import * as library from '../../../lib';
import { Messages } from '../../../lib/tenant-queue.messages';

// The generator is a plain Node script (`npm run docs` runs it); this is its API.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const generator = require('../../../scripts/docs-errors.js') as {
  PAGE: string;
  page(): string;
  whenAndWhat(text: string): { when: string; what: string };
};

describe('docs/errors.md, generated from lib/tenant-queue.messages.ts', () => {
  const committed = readFileSync(generator.PAGE, 'utf8');

  it('is up to date (else: npm run docs, and commit the page)', () => {
    expect(committed).toBe(generator.page());
  });

  it('lists every message factory and every exported error class', () => {
    const factories = Object.keys(Messages).filter(
      (key) => !committed.includes(`\`Messages.${key}\``),
    );
    const errors = Object.keys(library)
      .filter((name) => name.endsWith('Error'))
      .filter((name) => !committed.includes(`### \`${name}\``));
    expect(factories).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('splits a message into what happened and what to do', () => {
    expect(generator.whenAndWhat(Messages.unknownQueue('media'))).toEqual({
      when: 'Queue "media" is not registered.',
      what: "Add TenantQueueModule.registerQueue({ name: 'media' }) to the imports of the module that uses it.",
    });
    expect(generator.whenAndWhat(Messages.dashboardJobState('x', ['waiting']))).toEqual({
      when: 'Unknown job list "x":',
      what: 'Ask for one of waiting.',
    });
    expect(committed).toContain(
      '  - when: Queue "{name}" is not registered.\n' +
        "    what to do: Add TenantQueueModule.registerQueue({ name: '{name}' }) to the imports of the module that uses it.",
    );
  });
});
