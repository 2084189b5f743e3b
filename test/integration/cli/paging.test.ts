/**
 * Past a page, on PostgreSQL + S3 (s3rver, which pages only under OpenSSL's legacy provider:
 * test/helpers/s3-server.ts). One store holds 1,013 files whose bytes are S3 objects: 3 uploaded
 * over HTTP as a client does, 1,010 tiny ones PUT at the backend's keys and recorded through the
 * storage layer, each with a second revision naming another file's blob; orphans are committed
 * through the S3 backend (stage, intent, HEAD, PUT) with no row. So every list is read past its
 * first page:
 *   - the backend's listing (ListObjectsV2 after StartAfter, 1,000 keys a page): 2 pages;
 *   - `driveway check` (blob rows 500 a page: 3 pages; then the listing) and `check --repair`;
 *   - the collector (the listing, deleting as it goes);
 *   - `driveway backup` (blob rows 1,000 a page; PostgreSQL tables 2,000 rows a page, and the
 *     revisions are 2,023);
 *   - `driveway restore` of that backup into SQLite (blob rows 1,000 a page), then `driveway
 *     migrate` of the restored store into PostgreSQL + S3 (blobs and rows in batches of 500; a
 *     restore into PostgreSQL runs the same migration over the backup folder).
 * Objects of other stores in the same bucket (other prefixes) are never listed, named or deleted.
 */
import { HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { S3BlobBackend } from '../../../src/store/blobs/s3.js';
import { getChildByName, getTopLevel, type NodeRow } from '../../../src/store/storage/nodes.js';
import { insertNewFile, insertNextRevision } from '../../../src/store/storage/revisions.js';
import { runDriveway, type CommandRun } from '../../helpers/driveway-process.js';
import { freshPostgresDatabase, requirePostgres } from '../../helpers/postgres.js';
import { freshS3Bucket, postgresS3Env, s3rverClient } from '../../helpers/s3-server.js';
import { blobHashOf, createSeeder, uploadFile } from '../../helpers/seed.js';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import { patternBytes } from '../../helpers/stream-helpers.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const postgres = requirePostgres();

const UPLOADED = 3;
const BULK = 1_010;
const FILES = UPLOADED + BULK;
/** Unreferenced objects planted before `check` and again before the collector, the last LATE_ORPHANS of them after every referenced key. */
const ORPHANS = 30;
const LATE_ORPHANS = 10;
const PREFIX = 'paged';
/** Keys of other stores sharing the bucket, before and after the store's own in key order. */
const NEIGHBOURS = ['a-store/blobs/', 'paged-too/blobs/', 'pagedx/', 'z-store/blobs/'];

let tmp: ReturnType<typeof makeTmpDir>;
let store: TestStore;
let s3: S3Client;
let bucket: string;
let endpoint: string;
/** The environment of a `driveway` command on the store (its database and bucket), and a config file with no grace period. */
let env: Record<string, string>;
let graceless: string;
/** Hashes of the blobs the store's rows name. */
const referenced = new Set<string>();
let neighbourKeys: string[] = [];

/** Commits the bodies as blobs through the store's backend (each pinned until released); their hashes. */
async function commitBlobs(bodies: readonly Buffer[]): Promise<string[]> {
  const blobs = store.ctx.blobs;
  const hashes: string[] = new Array<string>(bodies.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < bodies.length) {
      const i = next++;
      // inlineMax -1: a file and an object whatever the size, as a blob above 64 KiB is.
      const staged = await blobs.stage(bodies[i] as Buffer, Number.POSITIVE_INFINITY, undefined, -1);
      await blobs.commit(staged);
      hashes[i] = staged.hash;
    }
  };
  await Promise.all(Array.from({ length: 12 }, worker));
  return hashes;
}

/**
 * Unreferenced objects, committed and released with no row naming them (an upload whose row was
 * never written); the last LATE_ORPHANS sort after every referenced blob, past the listing's first page.
 */
async function plantOrphans(tag: string): Promise<string[]> {
  const last = [...referenced].sort().at(-1) as string;
  const bodies: Buffer[] = [];
  for (let i = 0; bodies.length < ORPHANS; i += 1) {
    const body = Buffer.from(`${tag} ${i}`);
    if (bodies.length < ORPHANS - LATE_ORPHANS || blobHashOf(body) > last) bodies.push(body);
  }
  const hashes = await commitBlobs(bodies);
  for (const hash of hashes) await store.ctx.blobs.release(hash);
  return hashes;
}

/**
 * The hashes of the blob objects under `prefix` (`<prefix>/blobs/<hash>`, or `blobs/<hash>` for
 * ''), page by page by continuation token (not the code under test's way). Always under a
 * prefix: s3rver lists in the order of its folder walk, so across sibling folders where one name
 * extends another (`paged/`, `paged-too/`) keys come out of byte order and paging skips some.
 */
async function blobObjects(name: string, prefix: string): Promise<string[]> {
  const base = prefix === '' ? 'blobs/' : `${prefix}/blobs/`;
  const hashes: string[] = [];
  for (let token: string | undefined, more = true; more; ) {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: name, Prefix: base, ...(token ? { ContinuationToken: token } : {}) }));
    hashes.push(...(page.Contents ?? []).map((o) => (o.Key as string).slice(base.length)));
    token = page.NextContinuationToken;
    more = page.IsTruncated === true;
  }
  return hashes.sort();
}

/** The other stores' objects that are still there. */
async function neighboursLeft(): Promise<string[]> {
  const left: string[] = [];
  for (const key of neighbourKeys) {
    const there = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key })).then(
      () => true,
      () => false,
    );
    if (there) left.push(key);
  }
  return left;
}

/** Hashes named by the findings of `kind` a check printed, with how it printed them (PROBLEM or REPAIRED). */
function findings(run: CommandRun, kind: string): Array<{ state: string; hash: string }> {
  const found: Array<{ state: string; hash: string }> = [];
  for (const match of run.stdout.matchAll(new RegExp(`^(PROBLEM |REPAIRED) ${kind}: [a-z ]*?blob ([0-9a-f]{64})`, 'gm'))) {
    found.push({ state: (match[1] as string).trim(), hash: match[2] as string });
  }
  return found.sort((a, b) => a.hash.localeCompare(b.hash));
}

postgres.describe('past a page on PostgreSQL + S3', () => {
  beforeAll(async () => {
    tmp = makeTmpDir('driveway-paging-');
    store = await startTestStore({ storage: 'postgres', flags: { 'store.blobs.s3.prefix': PREFIX } });
    const s3Config = store.config.store.blobs.s3;
    bucket = s3Config.bucket as string;
    endpoint = s3Config.endpoint as string;
    s3 = s3rverClient(endpoint);
    env = { DRIVEWAY_DATA_DIR: path.join(tmp.dir, 'cli'), ...postgresS3Env(store.config.database.url as string, { bucket, endpoint }), DRIVEWAY_S3_PREFIX: PREFIX };
    graceless = path.join(tmp.dir, 'no-grace.yaml');
    writeFileSync(graceless, 'store:\n  blobs:\n    gcGraceSec: 0\n');

    // Three files uploaded as a client uploads them (above 64 KiB: S3 objects).
    const seeder = await createSeeder(store);
    const ann = await seeder.user('Ann Pages');
    for (let i = 0; i < UPLOADED; i += 1) {
      const body = patternBytes(i + 1, 70_000 + i);
      await uploadFile(seeder.client, ann.session, 'home', `uploaded-${i}.bin`, body);
      referenced.add(blobHashOf(body));
    }

    // The bulk: tiny objects PUT at the keys the backend gives them, rows through the storage
    // layer, 100 files a transaction (the orphans below go through the backend's own commit).
    const { sql } = store.ctx.storage;
    const backend = store.ctx.blobs as S3BlobBackend;
    const hashes = Array.from({ length: BULK }, (_, i) => blobHashOf(Buffer.from(`bulk ${i}`)));
    let next = 0;
    const put = async (): Promise<void> => {
      while (next < BULK) {
        const i = next++;
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: backend.keyOf(hashes[i] as string), Body: Buffer.from(`bulk ${i}`) }));
      }
    };
    await Promise.all(Array.from({ length: 16 }, put));
    const home = (await getTopLevel(sql, ann.uuid, 'home')) as NodeRow;
    const now = store.clock.now();
    for (let start = 0; start < BULK; start += 100) {
      await sql.transaction(async (tx) => {
        for (let i = start; i < Math.min(start + 100, BULK); i += 1) {
          await insertNewFile(tx, home, `bulk-${i}.txt`, { hash: hashes[i] as string, sizeBytes: `bulk ${i}`.length, now }, ann.uuid);
        }
      });
    }
    // A second revision of each, naming the next file's blob: 2,023 revision rows, every bulk blob named twice.
    for (let start = 0; start < BULK; start += 100) {
      await sql.transaction(async (tx) => {
        for (let i = start; i < Math.min(start + 100, BULK); i += 1) {
          const file = (await getChildByName(tx, home.uuid, `bulk-${i}.txt`)) as NodeRow;
          const j = (i + 1) % BULK;
          await insertNextRevision(tx, file, { hash: hashes[j] as string, sizeBytes: `bulk ${j}`.length, now }, ann.uuid);
        }
      });
    }
    for (const hash of hashes) referenced.add(hash);

    // Other stores' objects in the same bucket: blob-shaped keys under other prefixes.
    neighbourKeys = NEIGHBOURS.map((prefix) => `${prefix}${blobHashOf(Buffer.from(prefix))}`);
    for (const key of neighbourKeys) await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: Buffer.from('not this store') }));
  }, 180_000);

  afterAll(async () => {
    s3?.destroy();
    await store?.close();
    tmp?.remove();
  });

  it('lists the bucket past its first page: each of the store\'s objects once, in order, nothing of another prefix', async () => {
    expect(referenced.size).toBe(FILES);
    const listed: string[] = [];
    for await (const blob of store.ctx.blobs.list()) listed.push(blob.hash);
    expect(listed).toEqual([...referenced].sort());
    // Resumed after a key (StartAfter from the first call on), still past a page.
    const rest: string[] = [];
    for await (const blob of store.ctx.blobs.list(listed[5])) rest.push(blob.hash);
    expect(rest).toEqual(listed.slice(6));
  });

  it('driveway check reads every page of blob rows and of the listing; --repair removes exactly the orphans', async () => {
    const orphans = await plantOrphans('orphan before check');
    const all = [...referenced, ...orphans].sort();
    // A reference count off on the last page of blob rows (500 a page); orphans past the listing's first page (1,000 keys).
    const last = all.filter((h) => referenced.has(h)).at(-1) as string;
    await store.ctx.storage.sql.run('UPDATE blobs SET refs = refs + 5 WHERE hash = ?', [last]);
    expect(orphans.filter((h) => all.indexOf(h) >= 1_000).length).toBeGreaterThanOrEqual(LATE_ORPHANS);

    const check = await runDriveway(['check', '--config', graceless], { env });
    expect(check.stderr).toBe('');
    expect(findings(check, 'orphan-blob')).toEqual(orphans.sort().map((hash) => ({ state: 'PROBLEM', hash })));
    expect(findings(check, 'blob-refs')).toEqual([{ state: 'PROBLEM', hash: last }]);
    expect(check.stdout).toContain(`\n${FILES} blob(s) verified (`);
    expect(check.stdout).toMatch(new RegExp(`\\n${ORPHANS + 1} finding\\(s\\), 0 repaired, ${ORPHANS + 1} remaining\\n$`));
    expect(check.code).toBe(1);

    const repair = await runDriveway(['check', '--repair', '--config', graceless], { env });
    expect(repair.stderr).toBe('');
    expect(findings(repair, 'orphan-blob')).toEqual(orphans.sort().map((hash) => ({ state: 'REPAIRED', hash })));
    expect(findings(repair, 'blob-refs')).toEqual([{ state: 'REPAIRED', hash: last }]);
    expect(repair.code).toBe(0);

    expect(await blobObjects(bucket, PREFIX)).toEqual([...referenced].sort());
    expect(await neighboursLeft()).toEqual(neighbourKeys);
    expect(((await store.ctx.storage.sql.get<{ refs: number }>('SELECT refs FROM blobs WHERE hash = ?', [last])) as { refs: number }).refs).toBe(2);
  }, 120_000);

  it('the collector lists past the first page and removes the orphans there, nothing else', async () => {
    const orphans = await plantOrphans('orphan before the collector');
    const report = await store.ctx.blobs.collectGarbage(0);
    expect(report).toMatchObject({ seen: FILES + ORPHANS, removed: ORPHANS });
    expect(await blobObjects(bucket, PREFIX)).toEqual([...referenced].sort());
    expect(await neighboursLeft()).toEqual(neighbourKeys);
  });

  let backupDir: string;

  it('driveway backup copies every blob of 1,013 and every revision row of 2,023', async () => {
    backupDir = path.join(tmp.dir, 'backup');
    const run = await runDriveway(['backup', backupDir], { env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const manifest = JSON.parse(readFileSync(path.join(backupDir, 'manifest.json'), 'utf8')) as { tables: Record<string, number>; blobs: { files: number } };
    expect(manifest.blobs.files).toBe(FILES);
    expect(manifest.tables.revisions).toBe(FILES + BULK);
    expect(manifest.tables.blobs).toBe(FILES);
    const copied = readdirSync(path.join(backupDir, 'blobs'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name);
    expect(copied.sort()).toEqual([...referenced].sort());
  }, 120_000);

  it('driveway restore into SQLite, then driveway migrate of it into PostgreSQL + S3 in batches of 500: every blob and row', async () => {
    const sqliteDir = path.join(tmp.dir, 'restored-sqlite');
    const restored = await runDriveway(['restore', backupDir], { env: { DRIVEWAY_DATA_DIR: sqliteDir } });
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);

    const [databaseUrl, target] = await Promise.all([freshPostgresDatabase(), freshS3Bucket()]);
    const migrated = await runDriveway(
      ['migrate', '--to-database', databaseUrl, '--to-s3-bucket', target.bucket, '--to-s3-endpoint', target.endpoint, '--to-s3-prefix', 'moved', '--to-s3-force-path-style'],
      { env: { DRIVEWAY_DATA_DIR: sqliteDir, ...postgresS3Env(databaseUrl, target) } },
    );
    expect(migrated.stderr).toBe('');
    expect(migrated.code).toBe(0);
    // One line per batch: 500, 1000, then the rest.
    for (const done of [500, 1_000, FILES]) expect(migrated.stdout).toContain(`blobs: ${done}/${FILES} copied and verified`);
    for (const done of [500, 2_000, FILES + BULK]) expect(migrated.stdout).toContain(`table revisions: ${done}/${FILES + BULK} rows`);
    expect(migrated.stdout).toMatch(/verified: \d+ tables, \d+ rows, checksums equal/);
    expect(await blobObjects(target.bucket, 'moved')).toEqual([...referenced].sort());
  }, 120_000);
});
