/**
 * kill -9 of one instance while it takes uploads (issue 15, faults): two real driveway processes
 * over one PostgreSQL database and one S3 bucket; instance A is killed while it takes a stream of
 * uploads (new files, and new revisions of a file the test knows), at a moment the test does not
 * choose. The other instance goes on serving; every file is at its old or its new content (never
 * a mix, never a row without its bytes); disk_used is exact; and once the collector has run (on
 * B, with the grace and the intents' lifetime shortened by config files) the bucket holds exactly the
 * blobs the database references: nothing A left half-done stays behind.
 */
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ADMIN_BASIC, spawnDriveway, type DrivewayProcess } from '../../helpers/driveway-process.js';
import { requirePostgres, startPostgres, type TestPostgres } from '../../helpers/postgres.js';
import { postgresS3Env, s3rverClient, startS3Server, type TestS3Server } from '../../helpers/s3-server.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const postgres = requirePostgres();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
/** Above the inline limit (64 KiB), so the bytes go to the bucket. */
const FILE_BYTES = 300 * 1024;

let cluster: TestPostgres | undefined;
let s3: TestS3Server | undefined;
let databaseUrl = '';
let a: DrivewayProcess | undefined;
let b: DrivewayProcess | undefined;
let tmp: ReturnType<typeof makeTmpDir> | undefined;

function env(): Record<string, string> {
  return {
    DRIVEWAY_LOG_LEVEL: 'warn',
    ...postgresS3Env(databaseUrl, s3!),
  };
}

async function put(instance: DrivewayProcess, name: string, body: Buffer): Promise<number> {
  const response = await fetch(`${instance.davUrl}/home/${name}`, { method: 'PUT', headers: { authorization: ADMIN_BASIC }, body });
  await response.arrayBuffer();
  return response.status;
}

async function get(instance: DrivewayProcess, name: string): Promise<{ status: number; body: Buffer }> {
  const response = await fetch(`${instance.davUrl}/home/${name}`, { headers: { authorization: ADMIN_BASIC } });
  return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
}

async function query<T extends pg.QueryResultRow>(text: string): Promise<T[]> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    return (await db.query<T>(text)).rows;
  } finally {
    await db.end();
  }
}

async function bucketKeys(): Promise<string[]> {
  const client = s3rverClient(s3!.endpoint);
  try {
    const listed = await client.send(new ListObjectsV2Command({ Bucket: s3!.bucket, Prefix: 'blobs/' }));
    return (listed.Contents ?? []).map((o) => o.Key as string).sort();
  } finally {
    client.destroy();
  }
}

postgres.describe('an instance killed with SIGKILL while it takes uploads', () => {
  beforeAll(async () => {
    [cluster, s3] = await Promise.all([startPostgres(), startS3Server()]);
    databaseUrl = await cluster.createDatabase();
    tmp = makeTmpDir('driveway-killed-');
    // An upload's intent lives 5 s past its last write (A records it, so A's setting counts), and
    // B collects every 2 s with no grace: what A leaves half-done is gone within seconds.
    const shortIntents = path.join(tmp.dir, 'short-intents.yaml');
    writeFileSync(shortIntents, 'store:\n  blobs:\n    s3:\n      uploadIntentTtlSec: 5\n');
    const collector = path.join(tmp.dir, 'collector.yaml');
    writeFileSync(collector, 'store:\n  blobs:\n    gcGraceSec: 0\n    gcIntervalSec: 2\n    s3:\n      uploadIntentTtlSec: 5\n');
    a = await spawnDriveway({ dataDir: path.join(tmp.dir, 'a'), env: env(), args: ['--config', shortIntents] });
    b = await spawnDriveway({ dataDir: path.join(tmp.dir, 'b'), env: env(), args: ['--config', collector] });
  }, 90_000);

  afterAll(async () => {
    a?.kill();
    b?.kill();
    await Promise.allSettled([cluster?.stop(), s3?.close()]);
    tmp?.remove();
  });

  it('leaves every file at its old or new content, disk_used exact, and no orphan object after the collector ran', async () => {
    // Known content before: the file A will be rewriting when it dies.
    const versions = new Map<string, string>();
    const v1 = randomBytes(FILE_BYTES);
    versions.set(sha(v1), 'v1');
    expect(await put(b!, 'kept.bin', v1)).toBe(201);

    // A takes a stream of uploads, 6 at a time: new files and new revisions of kept.bin.
    const sent = new Map<string, Set<string>>();
    let stop = false;
    const uploads: Promise<void>[] = [];
    for (let lane = 0; lane < 6; lane++) {
      uploads.push(
        (async () => {
          for (let i = 0; !stop && i < 200; i++) {
            const name = lane === 0 ? 'kept.bin' : `new-${lane}-${i}.bin`;
            const body = randomBytes(FILE_BYTES);
            if (!sent.has(name)) sent.set(name, new Set());
            sent.get(name)!.add(sha(body));
            const status = await put(a!, name, body).catch(() => 0);
            if (status === 0) return; // A is gone.
            expect([201, 204]).toContain(status);
          }
        })(),
      );
    }
    // Killed somewhere inside the stream, at a moment the uploads do not know.
    await sleep(1_500 + Math.floor(Math.random() * 1_000));
    a!.child.kill('SIGKILL');
    expect(await a!.exited).toBeNull();
    stop = true;
    await Promise.all(uploads);
    expect(sent.size).toBeGreaterThan(1);

    // B goes on, and every file it lists is one whole upload: the old content or one sent whole.
    for (const [name, hashes] of [['kept.bin', new Set([sha(v1), ...(sent.get('kept.bin') ?? [])])] as const, ...[...sent].filter(([n]) => n !== 'kept.bin')]) {
      const answer = await get(b!, name);
      if (name === 'kept.bin') expect(answer.status).toBe(200);
      if (answer.status === 404) continue; // never committed
      expect(answer.status).toBe(200);
      expect(hashes.has(sha(answer.body))).toBe(true);
    }
    expect(await put(b!, 'after.bin', randomBytes(FILE_BYTES))).toBe(201);

    // disk_used is the sum of the live revisions.
    const [usage] = await query<{ used: string; sum: string }>(
      "SELECT u.disk_used AS used, (SELECT COALESCE(SUM(r.size), 0) FROM revisions r JOIN nodes n ON n.uuid = r.node_uuid WHERE n.owner_uuid = u.uuid) AS sum FROM users u WHERE u.username = 'admin'",
    );
    expect(Number(usage!.used)).toBe(Number(usage!.sum));

    // After B's collector ran (intents past their 5 s, no grace), the bucket holds exactly the referenced blobs.
    const referenced = async () =>
      (await query<{ hash: string }>('SELECT hash FROM blobs WHERE data IS NULL AND refs > 0 ORDER BY hash')).map((r) => `blobs/${r.hash}`);
    // The bucket can match before the last intents are swept: an upload A committed but did not
    // live to close leaves an intent whose blob is referenced, which only the collector ends.
    const openIntents = async () => Number((await query<{ n: string }>('SELECT COUNT(*) AS n FROM blob_intents'))[0]!.n);
    let keys: string[] = [];
    const deadline = Date.now() + 30_000;
    for (;;) {
      keys = await bucketKeys();
      const expected = await referenced();
      if ((JSON.stringify(keys) === JSON.stringify(expected) && (await openIntents()) === 0) || Date.now() > deadline) break;
      await sleep(500);
    }
    expect(keys).toEqual(await referenced());
    expect(await openIntents()).toBe(0);
  }, 90_000);
});
