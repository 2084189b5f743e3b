/**
 * `npm start` on PostgreSQL + S3: the real entry point (src/main.ts) as a child process with
 * DRIVEWAY_DATABASE_URL naming a fresh database of the run's cluster and DRIVEWAY_S3_* a fresh
 * s3rver bucket, the AWS credentials in the environment as an operator sets them. It migrates
 * the empty database at start, a file PUT through the bridge (Basic login) comes back by GET
 * byte for byte, its row is in PostgreSQL and its bytes are in the bucket, and SIGTERM ends it
 * with exit code 0.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshPostgresDatabase, requirePostgres } from '../../helpers/postgres.js';
import { freshS3Bucket, postgresS3Env, s3rverClient } from '../../helpers/s3-server.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';
import { ADMIN_BASIC, spawnDriveway } from '../../helpers/driveway-process.js';
import { startTestStore } from '../../helpers/start-store.js';

const postgres = requirePostgres();

let tmp: ReturnType<typeof makeTmpDir>;
let child: ChildProcess | undefined;

beforeAll(() => {
  tmp = makeTmpDir('driveway-pg-start-');
});

afterAll(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  tmp.remove();
});

postgres.describe('driveway on PostgreSQL + S3', () => {
  it('starts on a postgres:// URL with S3 blobs, serves a PUT and GET through the bridge, and stops on SIGTERM', async () => {
    const databaseUrl = await freshPostgresDatabase();
    const s3 = await freshS3Bucket();
    const started = await spawnDriveway({ dataDir: tmp.dir, env: { DRIVEWAY_LOG_LEVEL: 'warn', ...postgresS3Env(databaseUrl, s3) } });
    child = started.child;
    const { davUrl } = started;

    const auth = ADMIN_BASIC;
    // Above the 64 KiB kept in the database row: the bytes must go to the bucket.
    const body = randomBytes(200 * 1024);
    const put = await fetch(`${davUrl}/home/on-postgres.bin`, { method: 'PUT', headers: { authorization: auth }, body });
    expect(put.status).toBe(201);
    const get = await fetch(`${davUrl}/home/on-postgres.bin`, { headers: { authorization: auth } });
    expect(get.status).toBe(200);
    expect(Buffer.from(await get.arrayBuffer()).equals(body)).toBe(true);
    expect((await fetch(`${davUrl}/home/on-postgres.bin`, { headers: { authorization: 'Basic ' + Buffer.from('admin:wrong').toString('base64') } })).status).toBe(401);

    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      const rows = await db.query("SELECT n.name, r.size FROM nodes n JOIN revisions r ON r.node_uuid = n.uuid WHERE n.name = 'on-postgres.bin'");
      expect(rows.rows.map((r: { name: string; size: unknown }) => [r.name, Number(r.size)])).toEqual([['on-postgres.bin', body.length]]);
    } finally {
      await db.end();
    }
    const s3client = s3rverClient(s3.endpoint);
    try {
      const listed = await s3client.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
      expect((listed.Contents ?? []).length).toBe(1);
      expect(listed.Contents?.[0]?.Size).toBe(body.length);
    } finally {
      s3client.destroy();
    }

    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
    expect(child.exitCode).toBe(0);
  }, 120_000);

  it('refuses to start on a database whose schema is newer than this driveway, naming it without its password', async () => {
    const databaseUrl = await freshPostgresDatabase();
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      await db.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied BIGINT NOT NULL)');
      await db.query("INSERT INTO schema_migrations VALUES (999, '999-from-the-future.sql', 0)");
    } finally {
      await db.end();
    }
    const password = new URL(databaseUrl).password;
    const failure = startTestStore({ storage: 'sqlite', flags: { 'database.url': databaseUrl } });
    await expect(failure).rejects.toThrow(/holds schema version 999, newer than this driveway knows/);
    const message = ((await failure.catch((err: unknown) => err)) as Error).message;
    expect(message).toContain(`postgres://driveway:***@127.0.0.1`);
    expect(message).not.toContain(password);
  });
});
