import { readFileSync } from 'node:fs';
import { MissingPeerDependencyError } from '../errors/missing-peer-dependency.error';
import { Messages } from '../../tenant-queue.messages';

/**
 * The optional peer dependencies an entry point is built on, with their ranges as package.json's
 * `peerDependencies` gives them (`optional-peer.spec.ts` keeps the two equal).
 */
export const OPTIONAL_PEER_RANGES = {
  '@nestjs/terminus': '^11.0.0 || ^12.0.0',
  '@nestjs/bullmq': '^11.0.5 || ^12.0.0',
  '@bull-board/nestjs': '^9.10.1',
} as const;

export type OptionalPeer = keyof typeof OPTIONAL_PEER_RANGES;

/**
 * Throws `MissingPeerDependencyError` when `peer` cannot be found: called by an entry point's
 * index.ts before anything that imports the peer, which would fail with Node's bare "Cannot find
 * module". Resolved from this package, as the entry point's own `require` of the peer is.
 */
export function assertOptionalPeer(entryPoint: string, peer: OptionalPeer): void {
  try {
    require.resolve(peer);
  } catch (error) {
    // Found but not resolvable as a whole (an `exports` map): the import itself will tell.
    if ((error as { code?: unknown }).code !== 'MODULE_NOT_FOUND') return;
    throw new MissingPeerDependencyError(
      entryPoint,
      peer,
      Messages.missingPeer(entryPoint, peer, installSpec(peer)),
      { cause: error },
    );
  }
}

/**
 * What to install: a `@nestjs/*` peer at the app's Nest major (its range admits 11 and 12, and
 * npm would take 12, ES modules only, which jest cannot load beside Nest 11), else the range.
 */
function installSpec(peer: OptionalPeer): string {
  const range = OPTIONAL_PEER_RANGES[peer];
  const major = peer.startsWith('@nestjs/') ? nestMajor() : undefined;
  return major !== undefined && range.includes(`^${major}.`)
    ? `${peer}@^${major}`
    : `${peer}@${range}`;
}

/** The major of the app's `@nestjs/core`, if it can be read. */
function nestMajor(): string | undefined {
  try {
    const manifest = readFileSync(require.resolve('@nestjs/core/package.json'), 'utf8');
    return (JSON.parse(manifest) as { version: string }).version.split('.')[0];
  } catch {
    return undefined;
  }
}
