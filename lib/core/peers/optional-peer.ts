import { MissingPeerDependencyError } from '../errors/missing-peer-dependency.error';
import { Messages } from '../../tenant-queue.messages';

/**
 * The optional peer dependencies an entry point is built on, with their ranges as package.json's
 * `peerDependencies` gives them (`optional-peer.spec.ts` keeps the two equal).
 */
export const OPTIONAL_PEER_RANGES = {
  '@nestjs/terminus': '^11.0.0 || ^12.0.0',
  '@nestjs/bullmq': '^11.0.5',
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
      Messages.missingPeer(entryPoint, peer, OPTIONAL_PEER_RANGES[peer]),
      { cause: error },
    );
  }
}
