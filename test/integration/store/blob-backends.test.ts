/**
 * One contract, every blob backend: the local folder and S3 (s3rver on loopback, spoken to over
 * HTTP by @aws-sdk/client-s3), each over a real SQLite database (the ledger: rows and intents).
 * put (stage, commit, release), get whole and ranged, head, list, remove only when unreferenced
 * and unpinned; a body larger than a part (12 MiB, 5 MiB parts); GC's grace period and its
 * re-check just before deleting. S3 alone: a crash mid-upload leaves an intent naming the
 * multipart upload, which the sweep of another instance aborts and clears; an object written
 * but never referenced before a crash is deleted by it, one a row refers to is kept.
 */
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, type Logger } from '../../../src/common/logger.js';
import { BlobMissingError, type BlobBackend, type BlobLedger } from '../../../src/store/blobs/blob-backend.js';
import { LocalBlobBackend } from '../../../src/store/blobs/local.js';
import { S3BlobBackend } from '../../../src/store/blobs/s3.js';
import { contentHashOf } from '../../../src/store/blobs/staging.js';
import { Durability } from '../../../src/store/durability.js';
import { addBlobRef } from '../../../src/store/storage/blob-refs.js';
import { storageBlobLedger } from '../../../src/store/storage/revisions.js';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import type { Sql } from '../../../src/store/storage/sql.js';
import { openDatabase, type Db } from '../../../src/store/storage/dialects/sqlite-open.js';
import { captureLog } from '../../helpers/log-capture.js';
import { S3RVER_CREDENTIALS, startS3Server, type TestS3Server } from '../../helpers/s3-server.js';
import { MiB, patternBytes } from '../../helpers/stream-helpers.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const PART = 5 * MiB;
const HOUR = 3_600_000;

let s3: TestS3Server;
beforeAll(async () => {
  s3 = await startS3Server();
});
afterAll(async () => {
  await s3.close();
});

interface Harness {
  db: Db;
  /** What the ledger's durable() runs: the server's fsync of the WAL. */
  durability: Durability;
  sql: Sql;
  ledger: BlobLedger;
  /** The clock S3 intents are dated by. */
  clock: { ms: number };
  /** A backend over the same data dir / bucket prefix and database: another instance, or this one after a restart. */
  make(options?: { spy?: S3Spy; log?: Logger }): BlobBackend;
}

/** S3 commands seen (by name and input), and a hook that may fail one (a crash, a refusal). */
interface S3Spy {
  sent: Array<{ name: string; input: Record<string, unknown> }>;
  fail?: (name: string, input: Record<string, unknown>) => Error | undefined;
}

function spyOn(backend: S3BlobBackend, spy: S3Spy): void {
  backend.client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = String(context.commandName ?? '').replace(/Command$/, '');
      const input = args.input as Record<string, unknown>;
      spy.sent.push({ name, input });
      const failure = spy.fail?.(name, input);
      if (failure) throw failure;
      return next(args);
    },
    { step: 'initialize', name: 'testSpy' },
  );
}

let tmp: ReturnType<typeof makeTmpDir>;
let prefixCounter = 0;

/** A SQLite database as the server opens it, with its durability and the blob ledger over both. */
function database(): Pick<Harness, 'db' | 'durability' | 'sql' | 'ledger'> {
  const file = `${tmp.dir}/db.sqlite`;
  const db = openDatabase(file);
  const sql = new SqliteStorage(db).sql;
  const durability = new Durability(db, file);
  return { db, durability, sql, ledger: storageBlobLedger(sql, () => durability.durable()) };
}

function localHarness(): Harness {
  const base = database();
  return { ...base, clock: { ms: Date.now() }, make: () => new LocalBlobBackend(`${tmp.dir}/data`, base.ledger) };
}

function s3Harness(): Harness {
  const { db, durability, sql, ledger } = database();
  const clock = { ms: Date.now() };
  // A prefix per test: one bucket, stores that do not see each other's objects.
  const prefix = `t${(prefixCounter += 1)}/`;
  return {
    db,
    durability,
    sql,
    ledger,
    clock,
    make: (options = {}) => {
      const backend = new S3BlobBackend({
        bucket: s3.bucket,
        endpoint: s3.endpoint,
        region: 'us-east-1',
        prefix,
        forcePathStyle: true,
        partSizeBytes: PART,
        uploadIntentTtlMs: HOUR,
        stagingDir: `${tmp.dir}/tmp-${Math.random().toString(36).slice(2)}`,
        ledger,
        now: () => clock.ms,
        log: options.log ?? createLogger('silent'),
        credentials: S3RVER_CREDENTIALS,
      });
      if (options.spy) spyOn(backend, options.spy);
      return backend;
    },
  };
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

async function read(backend: BlobBackend, hash: string, range?: { start: number; end: number }): Promise<Buffer> {
  const reader = await backend.get(hash, range);
  if (reader.kind === 'stream') return readAll(reader.body);
  // The positional reads the in-process GET uses, and the stream, must agree.
  const streamed = await readAll(reader.stream());
  return streamed;
}

/** put: staged (inline limit 0: always kept by the backend), committed, released. */
async function put(backend: BlobBackend, bytes: Buffer): Promise<string> {
  const staged = await backend.stage(Readable.from([bytes]), Number.POSITIVE_INFINITY, undefined, 0);
  await backend.commit(staged);
  await backend.release(staged.hash);
  return staged.hash;
}

async function listed(backend: BlobBackend, after?: string): Promise<string[]> {
  const hashes: string[] = [];
  for await (const blob of backend.list(after)) hashes.push(blob.hash);
  return hashes;
}

function intents(db: Db): Array<{ kind: string; hash: string; upload_id: string | null }> {
  return db.prepare('SELECT kind, hash, upload_id FROM blob_intents ORDER BY created').all() as Array<{ kind: string; hash: string; upload_id: string | null }>;
}

describe.each([
  ['local', localHarness],
  ['s3', s3Harness],
] as const)('%s blob backend', (kind, makeHarness) => {
  let h: Harness;
  let backend: BlobBackend;

  beforeEach(async () => {
    tmp = makeTmpDir('driveway-backend-');
    h = makeHarness();
    backend = h.make();
    await backend.init();
  });
  afterEach(async () => {
    await backend.close();
    await h.durability.close();
    h.db.close();
    tmp.remove();
  });

  it('stores bytes at their content address: get, a range, head, list', async () => {
    const bytes = Buffer.from('the quick brown fox jumps over the lazy dog');
    const hash = await put(backend, bytes);
    expect(hash).toBe(contentHashOf(bytes));
    expect(await read(backend, hash)).toEqual(bytes);
    expect((await read(backend, hash, { start: 4, end: 8 })).toString()).toBe('quick');
    expect(await backend.head(hash)).toMatchObject({ hash, sizeBytes: bytes.length });
    const other = await put(backend, Buffer.from('another blob'));
    expect(await listed(backend)).toEqual([hash, other].sort());
    const [first, second] = [hash, other].sort() as [string, string];
    expect(await listed(backend, first)).toEqual([second]);
    // The same bytes again: one blob.
    expect(await put(backend, bytes)).toBe(hash);
    expect(await listed(backend)).toHaveLength(2);
    expect(intents(h.db)).toEqual([]);
  });

  it('answers a missing blob with BlobMissingError on get and undefined on head', async () => {
    const hash = contentHashOf('never stored');
    await expect(backend.get(hash)).rejects.toBeInstanceOf(BlobMissingError);
    expect(await backend.head(hash)).toBeUndefined();
  });

  it('removes an unreferenced blob, and keeps one a row refers to or an upload has pinned', async () => {
    const gone = await put(backend, Buffer.from('nobody refers to me'));
    expect(await backend.remove(gone)).toBe(true);
    expect(await backend.head(gone)).toBeUndefined();
    await expect(backend.get(gone)).rejects.toBeInstanceOf(BlobMissingError);

    const kept = await put(backend, Buffer.from('a row refers to me'));
    await addBlobRef(h.sql, kept, 18);
    expect(await backend.remove(kept)).toBe(false);
    expect(await read(backend, kept)).toEqual(Buffer.from('a row refers to me'));

    const staged = await backend.stage(Readable.from([Buffer.from('pinned by an upload')]), Number.POSITIVE_INFINITY, undefined, 0);
    await backend.commit(staged);
    expect(await backend.remove(staged.hash)).toBe(false);
    await backend.release(staged.hash);
    expect(await backend.remove(staged.hash)).toBe(true);
    expect(intents(h.db)).toEqual([]);
  });

  it('stores and reads back a body larger than a part (12 MiB in 5 MiB parts)', async () => {
    const spy: S3Spy = { sent: [] };
    const big = kind === 's3' ? h.make({ spy }) : backend;
    await big.init();
    const bytes = patternBytes(0, 12 * MiB);
    const hash = await put(big, bytes);
    expect(await big.head(hash)).toMatchObject({ sizeBytes: 12 * MiB });
    expect((await read(big, hash)).equals(bytes)).toBe(true);
    // A range across the first part boundary.
    const range = { start: PART - 100, end: PART + 99 };
    expect((await read(big, hash, range)).equals(bytes.subarray(range.start, range.end + 1))).toBe(true);
    if (kind === 's3') {
      expect(spy.sent.filter((c) => c.name === 'UploadPart').map((c) => c.input.PartNumber)).toEqual([1, 2, 3]);
      expect(spy.sent.map((c) => c.name)).toContain('CompleteMultipartUpload');
      await big.close();
    }
  });

  it('collects only blobs unreferenced for longer than the grace period', async () => {
    const young = await put(backend, Buffer.from('young and unreferenced'));
    const referenced = await put(backend, Buffer.from('old and referenced'));
    await addBlobRef(h.sql, referenced, 18);
    expect(await backend.collectGarbage(HOUR)).toMatchObject({ seen: 2, removed: 0 });
    expect(await backend.head(young)).toBeDefined();
    // Two hours on (S3 counts from the server's LastModified; local from the file's mtime).
    h.clock.ms += 2 * HOUR;
    const report = await backend.collectGarbage(kind === 's3' ? HOUR : 0);
    expect(report).toMatchObject({ seen: 2, removed: 1 });
    expect(await backend.head(young)).toBeUndefined();
    expect(await backend.head(referenced)).toBeDefined();
  });

  it('re-checks just before deleting: a row that appears after the scan keeps the blob', async () => {
    const bytes = Buffer.from('referenced by an upload elsewhere, mid-scan');
    const hash = await put(backend, bytes);
    // The scan sees no row; another instance commits its row of the same bytes right after.
    const racing: BlobLedger = {
      ...h.ledger,
      isReferenced: async (asked) => {
        const seen = await h.ledger.isReferenced(asked);
        if (asked === hash && !seen) await addBlobRef(h.sql, hash, bytes.length);
        return seen;
      },
    };
    let raced: BlobBackend;
    if (kind === 's3') {
      raced = new S3BlobBackend({ ...(backend as unknown as { options: ConstructorParameters<typeof S3BlobBackend>[0] }).options, ledger: racing });
    } else {
      let calls = 0;
      raced = new LocalBlobBackend(`${tmp.dir}/data`, { ...h.ledger, isReferenced: async (asked) => (calls++ === 0 ? racing.isReferenced(asked) : h.ledger.isReferenced(asked)) });
    }
    h.clock.ms += 2 * HOUR;
    const report = await raced.collectGarbage(kind === 's3' ? HOUR : 0);
    expect(report).toMatchObject({ seen: 1, removed: 0 });
    expect(await read(backend, hash)).toEqual(bytes);
    await raced.close();
  });

  if (kind === 's3') {
    it('logs S3 going away once (warn) and coming back once (info), however many calls fail or succeed meanwhile', async () => {
      const log = captureLog('info');
      const watched = h.make({ log: log.logger });
      await watched.init();
      const hash = await put(watched, Buffer.from('kept in the bucket'));
      await s3.stopServer();
      try {
        for (let i = 0; i < 3; i += 1) await expect(watched.head(hash)).rejects.toThrow(/S3 unavailable/);
        await expect(watched.probe(AbortSignal.timeout(5000))).rejects.toThrow(/S3 unavailable/);
      } finally {
        await s3.startServer();
      }
      for (let i = 0; i < 3; i += 1) expect(await watched.head(hash)).toMatchObject({ hash });
      expect(log.lines().map((l) => [l.level, l.msg])).toEqual([
        [40, 'S3 stopped answering: uploads and downloads of files kept there answer 503 until it is back'],
        [30, 'S3 answers again'],
      ]);
      expect(log.text()).not.toMatch(/"stack"/);
      await watched.close();
    });

    it('cleans up after a crash mid multipart upload: the intent names the upload, another instance aborts it', async () => {
      const crashing: S3Spy = {
        sent: [],
        // Part 2 never arrives and nothing is aborted: what a kill -9 after part 1 leaves.
        fail: (name, input) => (name === 'AbortMultipartUpload' || (name === 'UploadPart' && input.PartNumber === 2) ? new Error('crash') : undefined),
      };
      const doomed = h.make({ spy: crashing });
      await doomed.init();
      const staged = await doomed.stage(Readable.from([patternBytes(7, 11 * MiB)]), Number.POSITIVE_INFINITY, undefined, 0);
      await expect(doomed.commit(staged)).rejects.toThrow('crash');
      await doomed.release(staged.hash);
      const uploadId = crashing.sent.find((c) => c.name === 'CreateMultipartUpload') && (crashing.sent.find((c) => c.name === 'UploadPart')?.input.UploadId as string);
      expect(uploadId).toMatch(/\S/);
      expect(intents(h.db)).toEqual([{ kind: 'upload', hash: staged.hash, upload_id: uploadId }]);

      const spy: S3Spy = { sent: [] };
      const survivor = h.make({ spy });
      await survivor.init();
      // Not expired yet: a slow upload on another instance is left alone.
      expect((await survivor.collectGarbage(HOUR)).expiredUploads).toBe(0);
      expect(spy.sent.map((c) => c.name)).not.toContain('AbortMultipartUpload');
      h.clock.ms += 2 * HOUR;
      expect((await survivor.collectGarbage(HOUR)).expiredUploads).toBe(1);
      expect(spy.sent.filter((c) => c.name === 'AbortMultipartUpload').map((c) => c.input)).toEqual([
        expect.objectContaining({ UploadId: uploadId, Key: (survivor as S3BlobBackend).keyOf(staged.hash) }),
      ]);
      expect(intents(h.db)).toEqual([]);
      expect(await survivor.head(staged.hash)).toBeUndefined();
      await Promise.all([doomed.close(), survivor.close()]);
    });

    it('after a crash between upload and row: deletes the object unless a row refers to it by then', async () => {
      const orphan = await backend.stage(Readable.from([Buffer.from('uploaded, then the instance died')]), Number.POSITIVE_INFINITY, undefined, 0);
      await backend.commit(orphan);
      const saved = await backend.stage(Readable.from([Buffer.from('uploaded, row committed, then it died')]), Number.POSITIVE_INFINITY, undefined, 0);
      await backend.commit(saved);
      await addBlobRef(h.sql, saved.hash, saved.sizeBytes);
      // Neither is released: the process is gone. Another instance, after the intents expired:
      expect(intents(h.db).map((i) => i.hash).sort()).toEqual([orphan.hash, saved.hash].sort());
      const survivor = h.make();
      await survivor.init();
      h.clock.ms += 2 * HOUR;
      expect((await survivor.sweepAtStart())).toBe(2);
      expect(intents(h.db)).toEqual([]);
      expect(await survivor.head(orphan.hash)).toBeUndefined();
      expect(await survivor.head(saved.hash)).toBeDefined();
      await survivor.close();
    });

    it('an upload of bytes being deleted waits for the delete, then uploads them again', async () => {
      const bytes = Buffer.from('deleted and uploaded at once');
      const hash = await put(backend, bytes);
      const marker = await h.ledger.beginDelete(hash, h.clock.ms, h.clock.ms + 60_000);
      expect(marker).toBeDefined();
      const staged = await backend.stage(Readable.from([bytes]), Number.POSITIVE_INFINITY, undefined, 0);
      const uploading = backend.commit(staged);
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(intents(h.db).map((i) => i.kind)).toEqual(['delete']);
      // The other instance's delete goes through, then ends its marker.
      const other = h.make();
      await (other as S3BlobBackend).client.send(new (await import('@aws-sdk/client-s3')).DeleteObjectCommand({ Bucket: s3.bucket, Key: (other as S3BlobBackend).keyOf(hash) }));
      await h.ledger.endDelete(marker as string);
      await uploading;
      await addBlobRef(h.sql, hash, bytes.length);
      await backend.release(hash);
      expect(await read(backend, hash)).toEqual(bytes);
      expect(intents(h.db)).toEqual([]);
      await other.close();
    });
  }
});
