/**
 * The checksum backfill's rate (issue 22, docs/extensions.md "Checksums"):
 * `npx tsx bench/checksum-backfill.ts`. For each storage, a fresh store in this process (the
 * test helpers' startTestStore: SQLite + the data dir's blob folder, or a throwaway PostgreSQL 15
 * database + an s3rver bucket, both on loopback) is seeded through its REST API with
 * BENCH_BACKFILL_SMALL (5,000) distinct 4 KiB files, held inline in their database row, and
 * BENCH_BACKFILL_LARGE (60) distinct 4 MiB files, kept by the blob backend (local file or S3
 * object). Then each size class in turn has its checksums set NULL, as before migration 019,
 * and one unbounded job (ops/checksum-backfill.ts, what `store.checksumBackfillPerSec` paces
 * and `driveway check --repair` runs) hashes them all: blobs per second and MB/s, best of
 * BENCH_ROUNDS (3). BENCH_BACKFILL_STORAGE=sqlite or postgres runs one storage only.
 * Figures only; nothing is asserted. The stores, their temp dirs, the database cluster and
 * s3rver are stopped and removed when it ends.
 */
import { randomBytes } from 'node:crypto';
import { backfillChecksums, blobsWithoutChecksums } from '../src/store/ops/checksum-backfill.js';
import { INLINE_MAX_BYTES } from '../src/store/blobs/staging.js';
import { createSeeder, uploadFile } from '../test/helpers/seed.js';
import { startTestStore, type TestStorageKind, type TestStore } from '../test/helpers/start-store.js';
import { MiB, positiveIntEnv } from './lib.js';

const SMALL = positiveIntEnv('BENCH_BACKFILL_SMALL', 5000);
const LARGE = positiveIntEnv('BENCH_BACKFILL_LARGE', 60);
const ROUNDS = positiveIntEnv('BENCH_ROUNDS', 3);
const SMALL_BYTES = 4 * 1024;
const LARGE_BYTES = 4 * MiB;

interface SizeClass {
  label: string;
  count: number;
  bytes: number;
}

const CLASSES: SizeClass[] = [
  { label: '4 KiB (inline)', count: SMALL, bytes: SMALL_BYTES },
  { label: '4 MiB (backend)', count: LARGE, bytes: LARGE_BYTES },
];

function storages(): TestStorageKind[] {
  const only = process.env.BENCH_BACKFILL_STORAGE;
  if (only === undefined || only === '') return ['sqlite', 'postgres'];
  if (only !== 'sqlite' && only !== 'postgres') throw new Error(`BENCH_BACKFILL_STORAGE must be sqlite or postgres, not ${only}`);
  return [only];
}

/** Uploads `count` distinct files of `bytes` each, 4 at a time, into the user's home. */
async function seed(store: TestStore, size: SizeClass): Promise<void> {
  const seeder = await createSeeder(store);
  const user = await seeder.user('Bench Backfill');
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < size.count) {
        const n = next++;
        await uploadFile(seeder.client, user.session, 'home', `f${n}.bin`, randomBytes(size.bytes));
      }
    }),
  );
}

/** One unbounded backfill over the blobs of `size` (their checksums forgotten first): blobs/s. */
async function round(store: TestStore, size: SizeClass): Promise<number> {
  const sql = store.ctx.storage.sql;
  await sql.run('UPDATE blobs SET sha1 = NULL, md5 = NULL, checksum_lease = NULL WHERE size = ?', [size.bytes]);
  const left = await blobsWithoutChecksums(sql);
  if (left !== size.count) throw new Error(`expected ${size.count} blobs without checksums, found ${left}`);
  const started = performance.now();
  const report = await backfillChecksums({ sql, blobs: store.ctx.blobs, perSec: Number.POSITIVE_INFINITY, now: () => store.clock.now() });
  const seconds = (performance.now() - started) / 1000;
  if (report.hashed.length !== size.count || report.failed !== 0 || !report.done) throw new Error(`backfill hashed ${report.hashed.length}/${size.count}, failed ${report.failed}`);
  return size.count / seconds;
}

async function measure(storage: TestStorageKind): Promise<string[]> {
  const lines: string[] = [];
  for (const size of CLASSES) {
    // A store per size class, so the other class's rows are not in the way of its claims.
    const store = await startTestStore({ storage, flags: { 'store.checksumBackfillPerSec': 0 } });
    try {
      await seed(store, size);
      const rates: number[] = [];
      for (let i = 0; i < ROUNDS; i++) rates.push(await round(store, size));
      const best = Math.max(...rates);
      const where = size.bytes <= INLINE_MAX_BYTES ? 'database row' : storage === 'postgres' ? 'S3 object' : 'local file';
      lines.push(
        `${storage.padEnd(8)} ${size.label.padEnd(16)} ${String(size.count).padStart(5)} blobs in ${where.padEnd(12)} ` +
          `best ${best.toFixed(0).padStart(6)} blobs/s  ${((best * size.bytes) / 1e6).toFixed(1).padStart(6)} MB/s  (rounds: ${rates.map((r) => r.toFixed(0)).join(', ')})`,
      );
      console.log(lines[lines.length - 1]);
    } finally {
      await store.close();
    }
  }
  return lines;
}

async function main(): Promise<void> {
  console.log(`checksum backfill, unbounded, one job; best of ${ROUNDS} rounds (node ${process.version}, ${process.platform})`);
  for (const storage of storages()) await measure(storage);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
