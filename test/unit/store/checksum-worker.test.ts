/**
 * SHA-1 and MD5 on worker threads that follow a file as it is written (blobs/checksum-worker.ts):
 * several files at once get their own digests, whether the worker is told of every step or
 * only of the end; an aborted stream does not disturb the others; a file shorter than
 * announced fails its stream instead of hanging it; an MD5 deferred mid-stream comes after the
 * SHA-1 answer (or is dropped when cancelled).
 */
import { createHash } from 'node:crypto';
import { appendFileSync, renameSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileChecksums } from '../../../src/store/blobs/checksum-worker.js';
import { patternBytes } from '../../helpers/stream-helpers.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const CHUNK = 64 * 1024;
const tmp = makeTmpDir('checksum-worker-');
let fileCounter = 0;

afterAll(() => tmp.remove());

function expected(bytes: Buffer): { sha1: string; md5: string } {
  return { sha1: createHash('sha1').update(bytes).digest('hex'), md5: createHash('md5').update(bytes).digest('hex') };
}

/** Writes `bytes` to a new file chunk by chunk, telling `sums` after each, as staging does. */
async function writeFollowed(bytes: Buffer): Promise<{ sha1: string; md5: string }> {
  const file = path.join(tmp.dir, `f${fileCounter++}`);
  writeFileSync(file, '');
  const sums = new FileChecksums(file);
  for (let offset = 0; offset < bytes.length; offset += CHUNK) {
    appendFileSync(file, bytes.subarray(offset, offset + CHUNK));
    sums.advance(Math.min(bytes.length, offset + CHUNK));
    // Let the worker run between some writes, as a body's chunks arrive over time.
    if (offset % (1024 * 1024) === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return sums.digestBoth(bytes.length);
}

describe('FileChecksums', () => {
  it('digests several growing files at once, each its own', async () => {
    const inputs = [0, 1, 2, 3].map((i) => patternBytes(i * 7, 12 * 1024 * 1024 + i * 1000));
    const digests = await Promise.all(inputs.map((bytes) => writeFollowed(bytes)));
    digests.forEach((digest, i) => expect(digest).toEqual(expected(inputs[i] as Buffer)));
  });

  it('digests a file it only hears about at its end, and an empty one', async () => {
    const bytes = patternBytes(3, 5 * 1024 * 1024 + 17);
    const file = path.join(tmp.dir, 'whole');
    writeFileSync(file, bytes);
    expect(await new FileChecksums(file).digest(bytes.length)).toEqual(expected(bytes));
    const empty = path.join(tmp.dir, 'empty');
    writeFileSync(empty, '');
    expect(await new FileChecksums(empty).digest(0)).toEqual(expected(Buffer.alloc(0)));
  });

  it('forgets an aborted stream; the next ones are unaffected', async () => {
    const file = path.join(tmp.dir, 'aborted');
    writeFileSync(file, patternBytes(1, 3 * 1024 * 1024));
    const aborted = new FileChecksums(file);
    aborted.advance(3 * 1024 * 1024);
    aborted.abort();
    const bytes = patternBytes(5, 2 * 1024 * 1024 + 3);
    expect(await writeFollowed(bytes)).toEqual(expected(bytes));
  });

  it('fails, not hangs, when the file is shorter than announced or gone', async () => {
    const file = path.join(tmp.dir, 'cut');
    writeFileSync(file, patternBytes(2, 2 * 1024 * 1024));
    const sums = new FileChecksums(file);
    truncateSync(file, 1024 * 1024);
    await expect(sums.digest(2 * 1024 * 1024)).rejects.toThrow(/ended at 1048576 bytes/);
    const gone = new FileChecksums(path.join(tmp.dir, 'never-written'));
    await expect(gone.digest(10)).rejects.toThrow(/ENOENT/);
    // The worker still serves the next stream.
    const bytes = patternBytes(9, 1024 * 1024 + 1);
    expect(await writeFollowed(bytes)).toEqual(expected(bytes));
  });

  it('answers with SHA-1 alone once MD5 is deferred mid-stream, then gives the MD5 of the whole file, even after a rename', async () => {
    const bytes = patternBytes(11, 6 * 1024 * 1024 + 5);
    const file = path.join(tmp.dir, 'later');
    writeFileSync(file, '');
    const sums = new FileChecksums(file);
    for (let offset = 0; offset < bytes.length; offset += CHUNK) {
      appendFileSync(file, bytes.subarray(offset, offset + CHUNK));
      sums.advance(Math.min(bytes.length, offset + CHUNK));
      if (offset === 2 * 1024 * 1024) sums.deferMd5();
    }
    expect(await sums.digest(bytes.length)).toEqual({ sha1: expected(bytes).sha1 });
    renameSync(file, `${file}.moved`);
    expect(await sums.later()?.md5).toBe(expected(bytes).md5);
  });

  it('drops a deferred MD5 when cancelled: its promise rejects, the next streams are unaffected', async () => {
    const bytes = patternBytes(12, 4 * 1024 * 1024);
    const file = path.join(tmp.dir, 'later-cancelled');
    writeFileSync(file, bytes);
    const sums = new FileChecksums(file);
    sums.deferMd5();
    expect(await sums.digest(bytes.length)).toEqual({ sha1: expected(bytes).sha1 });
    const later = sums.later();
    later?.cancel();
    await expect(later?.md5).rejects.toThrow(/dropped/);
    const next = patternBytes(13, 1024 * 1024 + 9);
    expect(await writeFollowed(next)).toEqual(expected(next));
  });
});
