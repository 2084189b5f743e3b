/**
 * SHA-1 and MD5 on worker threads (blobs/checksum-worker.ts): several streams at once get their
 * own digests, the in-flight bound makes a fast producer wait, and an aborted stream does not
 * disturb the others.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { OffThreadChecksums } from '../../../src/store/blobs/checksum-worker.js';
import { patternBytes } from '../../helpers/stream-helpers.js';

const CHUNK = 64 * 1024;

async function feed(sums: OffThreadChecksums, bytes: Buffer): Promise<{ waits: number }> {
  let waits = 0;
  for (let offset = 0; offset < bytes.length; offset += CHUNK) {
    sums.update(bytes.subarray(offset, offset + CHUNK));
    if (sums.isBusy) {
      waits += 1;
      await sums.ready();
      expect(sums.isBusy).toBe(false);
    }
  }
  return { waits };
}

describe('OffThreadChecksums', () => {
  it('digests several streams at once, each its own, waiting whenever 8 MiB are in flight', async () => {
    const inputs = [0, 1, 2, 3].map((i) => patternBytes(i * 7, 12 * 1024 * 1024 + i * 1000));
    const results = await Promise.all(
      inputs.map(async (bytes) => {
        const sums = new OffThreadChecksums();
        const { waits } = await feed(sums, bytes);
        return { waits, digest: await sums.digest() };
      }),
    );
    results.forEach(({ digest }, i) => {
      const bytes = inputs[i] as Buffer;
      expect(digest).toEqual({ sha1: createHash('sha1').update(bytes).digest('hex'), md5: createHash('md5').update(bytes).digest('hex') });
    });
    // 12 MiB fed without yielding to the worker's answers passes the 8 MiB bound.
    expect(results.some((r) => r.waits > 0)).toBe(true);
  });

  it('forgets an aborted stream; the next ones are unaffected, an empty one included', async () => {
    const aborted = new OffThreadChecksums();
    aborted.update(patternBytes(1, 3 * 1024 * 1024));
    aborted.abort();
    const empty = new OffThreadChecksums();
    expect(await empty.digest()).toEqual({ sha1: createHash('sha1').digest('hex'), md5: createHash('md5').digest('hex') });
    const bytes = patternBytes(5, 2 * 1024 * 1024 + 3);
    const sums = new OffThreadChecksums();
    await feed(sums, bytes);
    expect((await sums.digest()).sha1).toBe(createHash('sha1').update(bytes).digest('hex'));
  });
});
