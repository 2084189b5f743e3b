/**
 * kill -9 of driveway between the chunks of a Nextcloud chunked upload (bridge/uploads/): the
 * session and the chunks that arrived survive in the data directory (the session rows in the
 * store's database, the parts under <dataDir>/uploads), so after a restart the client lists what
 * arrived, sends the rest and assembles the file. The embedded default, a real process
 * (test/helpers/driveway-process.ts), stopped by its PID only. Then two instances over one
 * PostgreSQL database and one S3 bucket: the chunks go through either, the one that took the
 * first is killed, the other assembles; the parts lived in the bucket and are gone after.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, expect, it, describe } from 'vitest';
import { requirePostgres } from '../../helpers/postgres.js';
import { twoInstancesOverPostgresS3 } from '../../helpers/two-instances.js';
import { ADMIN_BASIC, spawnDriveway, type DrivewayProcess } from '../../helpers/driveway-process.js';
import { parseMultistatus } from '../../helpers/multistatus.js';
import { MiB, patternBytes } from '../../helpers/stream-helpers.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
const v1Name = (start: number, length: number): string => `${String(start).padStart(15, '0')}-${String(start + length - 1).padStart(15, '0')}`;

async function call(instance: DrivewayProcess, method: string, path: string, headers: Record<string, string> = {}, body?: Buffer): Promise<{ status: number; body: Buffer }> {
  const response = await fetch(`${instance.davUrl}${path}`, { method, headers: { authorization: ADMIN_BASIC, ...headers }, ...(body ? { body } : {}) });
  return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
}

describe('a chunked upload across a kill -9 of driveway', () => {
  let tmp: ReturnType<typeof makeTmpDir>;
  let instance: DrivewayProcess | undefined;

  beforeAll(() => {
    tmp = makeTmpDir('driveway-chunk-restart-');
  });
  afterAll(() => {
    instance?.kill();
    tmp.remove();
  });

  it('resumes after the restart and assembles every byte', async () => {
    const env = { DRIVEWAY_LOG_LEVEL: 'warn' };
    const content = patternBytes(11, 3 * MiB + 777);
    const chunks = [0, MiB, 2 * MiB, 3 * MiB].map((start) => ({ start, bytes: content.subarray(start, Math.min(start + MiB, content.length)) }));
    const dir = '/remote.php/dav/uploads/admin/rclone-chunked-upload-restart';

    instance = await spawnDriveway({ dataDir: tmp.dir, env });
    expect((await call(instance, 'MKCOL', `${dir}/`)).status).toBe(201);
    for (const chunk of chunks.slice(0, 2)) expect((await call(instance, 'PUT', `${dir}/${v1Name(chunk.start, chunk.bytes.length)}`, {}, chunk.bytes)).status).toBe(201);
    instance.child.kill('SIGKILL');
    expect(await instance.exited).toBeNull();

    instance = await spawnDriveway({ dataDir: tmp.dir, env });
    const listed = await call(instance, 'PROPFIND', `${dir}/`, { depth: '1' });
    expect(listed.status).toBe(207);
    const names = parseMultistatus(listed.body.toString('utf8'))
      .map((r) => r.href)
      .filter((href) => !href.endsWith('/'));
    expect(names).toEqual(chunks.slice(0, 2).map((c) => `${dir}/${v1Name(c.start, c.bytes.length)}`));
    for (const chunk of chunks.slice(2)) expect((await call(instance, 'PUT', `${dir}/${v1Name(chunk.start, chunk.bytes.length)}`, {}, chunk.bytes)).status).toBe(201);
    const moved = await call(instance, 'MOVE', `${dir}/.file`, { destination: `${instance.davUrl}/remote.php/dav/files/admin/home/resumed.bin`, 'oc-total-length': String(content.length) });
    expect(moved.status).toBe(201);
    const got = await call(instance, 'GET', '/home/resumed.bin');
    expect(got.body.length).toBe(content.length);
    expect(sha(got.body)).toBe(sha(content));
  });
});

/** The blob files under `<dataDir>/blobs` (names are their hashes), sorted. */
function blobFiles(dataDir: string): string[] {
  const root = path.join(dataDir, 'blobs');
  return existsSync(root) ? readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name).sort() : [];
}

describe('a kill -9 of driveway in the middle of an assembly (embedded: assembled in place)', () => {
  let tmp: ReturnType<typeof makeTmpDir>;
  let instance: DrivewayProcess | undefined;

  beforeAll(() => {
    tmp = makeTmpDir('driveway-chunk-assembly-crash-');
  });
  afterAll(() => {
    instance?.kill();
    tmp.remove();
  });

  it('leaves the target at its old or new content; the MOVE sent again finishes it; disk_used exact and nothing left behind', async () => {
    const env = { DRIVEWAY_LOG_LEVEL: 'warn' };
    const old = patternBytes(3, 200 * 1024);
    const content = patternBytes(17, 48 * MiB + 4321);
    const starts = Array.from({ length: Math.ceil(content.length / (4 * MiB)) }, (_, i) => i * 4 * MiB);
    const target = '/remote.php/dav/files/admin/home/crashed.bin';
    instance = await spawnDriveway({ dataDir: tmp.dir, env });
    expect((await call(instance, 'PUT', '/home/crashed.bin', {}, old)).status).toBe(201);
    // Kills at moments the test does not choose exactly: from the MOVE's first instant to past its end.
    for (const [round, delayMs] of [0, 60, 400].entries()) {
      const dir = `/remote.php/dav/uploads/admin/crash-${round}`;
      expect((await call(instance, 'MKCOL', `${dir}/`)).status).toBe(201);
      // Out of order and in parallel, as rclone may send them.
      const sent = await Promise.all([...starts].reverse().map((start) => call(instance!, 'PUT', `${dir}/${v1Name(start, Math.min(4 * MiB, content.length - start))}`, {}, content.subarray(start, start + 4 * MiB))));
      expect(sent.map((r) => r.status)).toEqual(starts.map(() => 201));
      const moving = call(instance, 'MOVE', `${dir}/.file`, { destination: `${instance.davUrl}${target}`, 'oc-total-length': String(content.length) }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, delayMs));
      instance.child.kill('SIGKILL');
      await instance.exited;
      await moving;

      instance = await spawnDriveway({ dataDir: tmp.dir, env });
      const now = await call(instance, 'GET', '/home/crashed.bin');
      expect([sha(old), sha(content)]).toContain(sha(now.body));
      // Sent again: the upload is still there (204, a new revision), or it was finished and removed
      // (404); at once, never 423: the killed assembly's lease (upload-service.ts: 60 s) went with
      // the process (run.ts frees the leases of a SQLite state at start, under the data dir's lock).
      const again = await call(instance, 'MOVE', `${dir}/.file`, { destination: `${instance.davUrl}${target}`, 'oc-total-length': String(content.length) });
      expect([204, 404]).toContain(again.status);
      expect(sha((await call(instance, 'GET', '/home/crashed.bin')).body)).toBe(sha(content));
      // The next round starts from the old content again.
      expect((await call(instance, 'PUT', '/home/crashed.bin', {}, old)).status).toBe(204);
    }
    const db = new Database(path.join(tmp.dir, 'driveway.sqlite'), { readonly: true });
    try {
      const usage = db.prepare("SELECT u.disk_used AS used, (SELECT COALESCE(SUM(r.size), 0) FROM revisions r JOIN nodes n ON n.uuid = r.node_uuid WHERE n.owner_uuid = u.uuid) AS sum FROM users u WHERE u.username = 'admin'").get() as { used: number; sum: number };
      expect(usage.used).toBe(usage.sum);
      const referenced = (db.prepare('SELECT hash FROM blobs WHERE data IS NULL AND refs > 0 ORDER BY hash').all() as Array<{ hash: string }>).map((r) => r.hash);
      // What a crash left (a blob renamed into place whose row never came) went at the restart.
      expect(blobFiles(tmp.dir)).toEqual(referenced);
    } finally {
      db.close();
    }
    expect(existsSync(path.join(tmp.dir, 'uploads')) ? readdirSync(path.join(tmp.dir, 'uploads')) : []).toEqual([]);
    expect(readdirSync(path.join(tmp.dir, 'tmp')).filter((name) => name.endsWith('.part'))).toEqual([]);
  }, 300_000);
});

const postgres = requirePostgres();

postgres.describe('a chunked upload across two instances over PostgreSQL + S3, one killed with -9 between chunks', () => {
  const pair = twoInstancesOverPostgresS3('driveway-chunk-instances-');

  it('starts through A, goes on through B after A is killed, and leaves no part in the bucket', async () => {
    const content = patternBytes(5, 2 * MiB + 4321);
    const chunkOf = (n: number): Buffer => content.subarray((n - 1) * MiB, n * MiB);
    const dir = '/remote.php/dav/uploads/admin/web-upload-7';
    const v2 = { destination: `${pair.a.davUrl}/remote.php/dav/files/admin/home/across.bin`, 'oc-total-length': String(content.length) };
    expect((await call(pair.a, 'MKCOL', `${dir}/`, v2)).status).toBe(201);
    expect((await call(pair.a, 'PUT', `${dir}/1`, v2, chunkOf(1))).status).toBe(201);
    expect((await call(pair.b, 'PUT', `${dir}/2`, { ...v2, destination: `${pair.b.davUrl}/remote.php/dav/files/admin/home/across.bin` }, chunkOf(2))).status).toBe(201);
    pair.a.child.kill('SIGKILL');
    expect(await pair.a.exited).toBeNull();
    const onB = { ...v2, destination: `${pair.b.davUrl}/remote.php/dav/files/admin/home/across.bin` };
    expect((await call(pair.b, 'PUT', `${dir}/3`, onB, chunkOf(3))).status).toBe(201);
    expect(await pair.uploadKeys()).toHaveLength(3);
    expect((await call(pair.b, 'MOVE', `${dir}/.file`, onB)).status).toBe(201);
    const got = await call(pair.b, 'GET', '/home/across.bin');
    expect(sha(got.body)).toBe(sha(content));
    expect(await pair.uploadKeys()).toEqual([]);
  });
});

postgres.describe('an assembly on PostgreSQL + S3 killed with -9 around the multipart completion', () => {
  const pair = twoInstancesOverPostgresS3('driveway-chunk-mp-crash-', 'bridge:\n  uploadExpirySec: 2\n');

  it('leaves the target at its old or new content; the sweep leaves no object nobody refers to, no multipart intent; disk_used exact', async () => {
    const content = patternBytes(23, 4 * 5 * MiB + 4321);
    const chunkOf = (n: number): Buffer => content.subarray((n - 1) * 5 * MiB, n * 5 * MiB);
    const count = Math.ceil(content.length / (5 * MiB));
    const dir = '/remote.php/dav/uploads/admin/mp-crash';
    const v2 = { destination: `${pair.a.davUrl}/remote.php/dav/files/admin/home/mp-crash.bin`, 'oc-total-length': String(content.length) };
    expect((await call(pair.a, 'MKCOL', `${dir}/`, v2)).status).toBe(201);
    const sent = await Promise.all(Array.from({ length: count }, (_, i) => call(pair.a, 'PUT', `${dir}/${i + 1}`, v2, chunkOf(i + 1))));
    expect(sent.map((r) => r.status)).toEqual(sent.map(() => 201));
    const moving = call(pair.a, 'MOVE', `${dir}/.file`, v2).catch(() => undefined);
    // Killed as soon as the completed object shows (then its bytes are read back for the hashes).
    for (const deadline = Date.now() + 20_000; (await pair.keys('adopted')).length === 0 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 5));
    pair.a.child.kill('SIGKILL');
    await pair.a.exited;
    await moving;
    expect(await pair.keys('adopted')).toHaveLength(1);

    const db = new pg.Client({ connectionString: pair.databaseUrl });
    await db.connect();
    try {
      const got = await call(pair.b, 'GET', '/home/mp-crash.bin');
      expect([404, 200]).toContain(got.status);
      if (got.status === 200) expect(sha(got.body)).toBe(sha(content));
      // B's sweep (every second here) removes the expired session: what no row refers to goes.
      const leftovers = async (): Promise<{ adopted: string[]; named: string[]; intents: number; parts: string[] }> => ({
        adopted: (await pair.keys('adopted')).sort(),
        named: (await db.query<{ key: string }>('SELECT o.key FROM blob_objects o JOIN blobs b ON b.hash = o.hash ORDER BY o.key')).rows.map((r) => r.key),
        intents: (await db.query("SELECT id FROM blob_intents WHERE id LIKE 'mp-%'")).rowCount ?? 0,
        parts: await pair.uploadKeys(),
      });
      let now = await leftovers();
      for (const deadline = Date.now() + 30_000; (now.intents > 0 || now.parts.length > 0 || now.adopted.join() !== now.named.join()) && Date.now() < deadline; ) {
        await new Promise((r) => setTimeout(r, 250));
        now = await leftovers();
      }
      expect(now.parts).toEqual([]);
      expect(now.intents).toBe(0);
      expect(now.adopted).toEqual(now.named);
      expect(now.adopted).toHaveLength(got.status === 200 ? 1 : 0);
      const usage = (await db.query<{ used: string; sum: string }>("SELECT u.disk_used AS used, (SELECT COALESCE(SUM(r.size), 0) FROM revisions r JOIN nodes n ON n.uuid = r.node_uuid WHERE n.owner_uuid = u.uuid) AS sum FROM users u WHERE u.username = 'admin'")).rows[0];
      expect(Number(usage?.used)).toBe(Number(usage?.sum));
    } finally {
      await db.end();
    }
  }, 120_000);
});
