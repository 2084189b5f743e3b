/**
 * The checksum backfill (ops/checksum-backfill.ts): blobs stored without SHA-1 and MD5 (as
 * before migration 019: the columns set NULL here) publish none, get them from the job (inline
 * and backend blobs, SQLite + local and PostgreSQL + S3), two jobs at once never hash one blob
 * twice, a stopped job gives its claims back and resumes where it stopped, and a store started
 * on such a database runs the job itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId, type HttpStoreClient, type StoreSession } from '../../../src/store-client/index.js';
import { backfillChecksums, blobsWithoutChecksums } from '../../../src/store/ops/checksum-backfill.js';
import { checksumsOf, createSeeder, uploadFile, USER_PASSWORD } from '../../helpers/seed.js';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import { MiB, patternBytes } from '../../helpers/stream-helpers.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

describe('checksum backfill', () => {
  let store: TestStore;
  let client: HttpStoreClient;
  let session: StoreSession;
  const contents = new Map<string, Buffer>();
  // A data dir of the suite's own: the last test restarts the store on it.
  const own = makeTmpDir('driveway-backfill-');

  beforeAll(async () => {
    // No background job: the test runs its own.
    store = await startTestStore({ dataDir: own.dir, flags: { 'store.checksumBackfillPerSec': 0 } });
    const seeder = await createSeeder(store);
    client = seeder.client;
    session = (await seeder.user('ann')).session;
    for (let i = 0; i < 8; i++) {
      // Small ones live in their database row, larger ones in the blob backend (local or S3).
      const bytes = i % 2 === 0 ? Buffer.from(`small file ${i}\n`) : patternBytes(i, 200_000 + i * MiB / 4);
      const name = `f${i}.bin`;
      await uploadFile(client, session, 'home', name, bytes);
      contents.set(name, bytes);
    }
  });
  afterAll(async () => {
    await store.close();
    own.remove();
  });

  const sql = () => store.ctx.storage.sql;
  const forget = () => sql().run('UPDATE blobs SET sha1 = NULL, md5 = NULL, checksum_lease = NULL');
  const run = (options: { perSec?: number; limit?: number; signal?: AbortSignal } = {}) =>
    backfillChecksums({ sql: sql(), blobs: store.ctx.blobs, perSec: options.perSec ?? Number.POSITIVE_INFINITY, now: () => store.clock.now(), limit: options.limit, signal: options.signal });

  async function expectAllPublished(): Promise<void> {
    const listed = await client.listFolder(session, nodeId('home'));
    for (const [name, bytes] of contents) expect(listed.find((e) => e.name === name)?.checksums, name).toEqual(checksumsOf(bytes));
  }

  it('fills the checksums of blobs that have none, equal to the bytes\' SHA-1 and MD5; until then none are published', async () => {
    await forget();
    expect(await blobsWithoutChecksums(sql())).toBe(contents.size);
    const listed = await client.listFolder(session, nodeId('home'));
    expect(listed.filter((e) => e.checksums !== undefined)).toEqual([]);
    const report = await run();
    expect(report).toMatchObject({ failed: 0, done: true });
    expect(report.hashed).toHaveLength(contents.size);
    expect(await blobsWithoutChecksums(sql())).toBe(0);
    await expectAllPublished();
  });

  it('lets two jobs at once share the work without hashing any blob twice', async () => {
    await forget();
    const [a, b] = await Promise.all([run(), run()]);
    const all = [...a.hashed, ...b.hashed];
    expect(new Set(all).size).toBe(all.length);
    expect(all).toHaveLength(contents.size);
    await expectAllPublished();
  });

  it('stops, gives back what it had not hashed, and resumes where it stopped', async () => {
    await forget();
    const first = await run({ limit: 3 });
    expect(first.hashed).toHaveLength(3);
    expect(first.done).toBe(false);
    expect(await blobsWithoutChecksums(sql())).toBe(contents.size - 3);

    // Stopped by its signal mid-batch: no claim is left to wait out.
    const stop = new AbortController();
    const slow = run({ perSec: 5, signal: stop.signal });
    setTimeout(() => stop.abort(), 300);
    const second = await slow;
    const leased = await sql().get<{ n: number }>('SELECT COUNT(*) AS n FROM blobs WHERE checksum_lease IS NOT NULL');
    expect(Number(leased?.n)).toBe(0);

    const rest = await run();
    expect(rest.done).toBe(true);
    expect(new Set([...first.hashed, ...second.hashed, ...rest.hashed]).size).toBe(contents.size);
    expect(first.hashed.length + second.hashed.length + rest.hashed.length).toBe(contents.size);
    await expectAllPublished();
  });

  it('runs in the background of a store that starts with blobs lacking checksums, at its configured rate', async () => {
    await forget();
    const dataDir = store.dataDir;
    await store.close();
    store = await startTestStore({ dataDir, flags: { 'store.checksumBackfillPerSec': 50 } });
    const seeder = await createSeeder(store);
    client = seeder.client;
    session = await client.login('ann@example.test', USER_PASSWORD);
    for (let i = 0; i < 300 && (await blobsWithoutChecksums(sql())) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await blobsWithoutChecksums(sql())).toBe(0);
    await expectAllPublished();
  });
});
