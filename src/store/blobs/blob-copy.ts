/**
 * Copying and verifying blobs between backends, for `driveway migrate` (store/migrate-embedded.ts):
 * the one place outside a backend that moves a blob's bytes, and it does so only through the
 * BlobBackend interface (get, stage, commit, release, head), never through a path or a key.
 *
 * A blob is verified by its address: the bytes read back from where it now lives must hash to
 * the name it is stored under. That is BLAKE3 (staging.ts) for every blob written since
 * migration 003, and SHA-256 for the older ones, whose names were never recomputed; both are
 * computed in one pass, so either kind is checked exactly. A copy is idempotent: a blob already
 * at the target with the right size is not sent again, only verified.
 */
import { createHash } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobBackend, BlobReader } from './blob-backend.js';
import { createContentHasher } from './staging.js';

/** A blob whose bytes do not hash to its address (or whose size is not its row's). */
export class BlobVerificationError extends Error {
  override name = 'BlobVerificationError';
  constructor(
    readonly hash: string,
    readonly where: string,
    detail: string,
  ) {
    super(`blob ${hash} in ${where}: ${detail}`);
  }
}

export interface BlobDigest {
  sizeBytes: number;
  blake3: string;
  sha256: string;
  /** The clients' checksums, when asked for (digestBlob's `checksums`: `driveway check`). */
  sha1?: string;
  md5?: string;
}

function bodyOf(reader: BlobReader): Readable {
  return reader.kind === 'file' ? reader.stream() : reader.body;
}

/** A pass-through that hashes (BLAKE3 and SHA-256; SHA-1 and MD5 too with `checksums`) and counts what flows through it. */
function digester(checksums = false): { through: Transform; digest: () => BlobDigest } {
  const blake3 = createContentHasher();
  const sha256 = createHash('sha256');
  const sha1 = checksums ? createHash('sha1') : undefined;
  const md5 = checksums ? createHash('md5') : undefined;
  let sizeBytes = 0;
  const through = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      sizeBytes += chunk.length;
      blake3.update(chunk);
      sha256.update(chunk);
      sha1?.update(chunk);
      md5?.update(chunk);
      callback(null, chunk);
    },
  });
  return {
    through,
    digest: () => ({
      sizeBytes,
      blake3: blake3.digest('hex'),
      sha256: sha256.digest('hex'),
      ...(sha1 && md5 ? { sha1: sha1.digest('hex'), md5: md5.digest('hex') } : {}),
    }),
  };
}

/** Reads a whole blob from `backend` and digests it. Throws BlobMissingError when it is not there. */
export async function digestBlob(backend: BlobBackend, hash: string, options: { checksums?: boolean } = {}): Promise<BlobDigest> {
  const reader = await backend.get(hash);
  try {
    const { through, digest } = digester(options.checksums);
    await pipeline(bodyOf(reader), through, async (source: AsyncIterable<Buffer>) => {
      for await (const _chunk of source) {
        // drained: only the digest matters
      }
    });
    return digest();
  } finally {
    await reader.close();
  }
}

/** Throws BlobVerificationError unless `digest` is that of the blob `hash` of `sizeBytes`. */
export function assertAddressed(hash: string, sizeBytes: number, digest: BlobDigest, where: string): void {
  if (digest.sizeBytes !== sizeBytes) throw new BlobVerificationError(hash, where, `${digest.sizeBytes} bytes, its row says ${sizeBytes}`);
  if (digest.blake3 !== hash && digest.sha256 !== hash) {
    throw new BlobVerificationError(hash, where, `its bytes hash to ${digest.blake3} (BLAKE3), not to its address`);
  }
}

/** Reads the blob back from `backend` and checks it against its address and size. */
export async function verifyBlob(backend: BlobBackend, hash: string, sizeBytes: number, where: string): Promise<BlobDigest> {
  const digest = await digestBlob(backend, hash);
  assertAddressed(hash, sizeBytes, digest, where);
  return digest;
}

export type CopyOutcome = 'copied' | 'present';

/**
 * Makes `hash` (of `sizeBytes`) readable at `target` with the bytes `source` holds, then reads
 * it back from the target and verifies it. A blob the target holds already with the right size
 * is only verified (an interrupted migration that is run again). The source's bytes are checked
 * against the address while they are staged: a damaged source blob is refused, never copied.
 */
export async function copyBlob(source: BlobBackend, target: BlobBackend, hash: string, sizeBytes: number, names: { source: string; target: string }): Promise<CopyOutcome> {
  const there = await target.head(hash);
  if (there?.sizeBytes === sizeBytes) {
    await verifyBlob(target, hash, sizeBytes, names.target);
    return 'present';
  }
  const reader = await source.get(hash);
  const { through, digest } = digester();
  let staged;
  try {
    const body = bodyOf(reader);
    body.on('error', (err) => through.destroy(err));
    body.pipe(through);
    // inlineMax -1: every body goes to a staged file, which the target backend uploads (an
    // empty one too), whatever size the store would keep in a row today.
    staged = await target.stage(through, Number.POSITIVE_INFINITY, undefined, -1);
  } finally {
    await reader.close();
  }
  const read = digest();
  try {
    assertAddressed(hash, sizeBytes, read, names.source);
    if (staged.inline) staged = await target.stage(staged.inline, Number.POSITIVE_INFINITY, undefined, -1);
  } catch (err) {
    await target.discard(staged);
    throw err;
  }
  // Stored under the address it has (a SHA-256 one stays so), not under the BLAKE3 staging computed.
  try {
    await target.commit({ ...staged, hash });
  } finally {
    await target.release(hash);
  }
  const back = await verifyBlob(target, hash, sizeBytes, names.target);
  if (back.blake3 !== read.blake3) throw new BlobVerificationError(hash, names.target, `read back as ${back.blake3} (BLAKE3), the source holds ${read.blake3}`);
  return 'copied';
}
