import { randomFillSync } from 'node:crypto';

/** Random bytes of one id: 96 bits, 16 characters of base64url. */
const ID_BYTES = 12;
/** Ids drawn from one fill of the pool. */
const POOL_IDS = 256;

const bytes = new Uint8Array(ID_BYTES * POOL_IDS);
const pool = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
let next = POOL_IDS;
/** Ids BullMQ may take for integers (`${parseInt(id, 10)}` === id): drawn again. */
const INTEGER_LIKE = /^-?\d+$/;

/**
 * @internal A job id the module picks when the caller gives none: 16 characters of base64url
 * (96 random bits; `A-Z a-z 0-9 - _`), drawn from a pool filled 256 ids at a time. Shorter than a
 * UUID (36), which matters at every place Redis keeps the id: the job's key, BullMQ's wait list or
 * prioritized set, the fair gate's ledger and the job's stored options (about 80 bytes a queued
 * job). Never one BullMQ refuses or misreads (integer-like, `:`, one of its key names: none has 16
 * characters) and never in the module's namespace (`~`, `.r<n>`).
 */
export function newJobId(): string {
  for (;;) {
    if (next === POOL_IDS) {
      randomFillSync(bytes);
      next = 0;
    }
    const at = next++ * ID_BYTES;
    const id = pool.toString('base64url', at, at + ID_BYTES);
    // Digits only, or `-` and digits (about 1 in 10^13): BullMQ may take it for an integer id.
    if (!INTEGER_LIKE.test(id)) return id;
  }
}
