/**
 * `driveway migrate` (issue 15, item 5), run as the real entry point in a child process: a real
 * embedded store (users, a group, nested folders, small files kept inline and large ones in blob
 * files, revisions, trash, a link and a private share, stars, an avatar, a login history) is
 * stopped and moved into a fresh PostgreSQL database of the run's cluster and a bucket of s3rver.
 * Every table is compared row for row with the SQLite file, every blob file byte for byte with
 * its object. Also: refused while an instance runs on the data directory (naming its PID),
 * killed (SIGKILL) in the blob phase and again in the table phase then run again to the same
 * result, refused on a database holding another store, finished or not, and on a source whose
 * schema is older than the code.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PostgresStorage } from '../../../src/store/storage/dialects/postgres.js';
import { NOT_COPIED } from '../../../src/store/storage/embedded-copy.js';
import { call, dataOf, groupAdmin } from '../../helpers/groups.js';
import { dataUrl, pngBytes } from '../../helpers/images.js';
import { freshPostgresDatabase, requirePostgres } from '../../helpers/postgres.js';
import { S3RVER_CREDENTIALS, freshS3Bucket, s3rverClient } from '../../helpers/s3-server.js';
import { createFolder, createSeeder, uploadFile } from '../../helpers/seed.js';
import { as } from '../../helpers/sharing.js';
import { startTestStore } from '../../helpers/start-store.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const RUN_MS = 120_000;
const PREFIX = 'moved/';

const postgres = requirePostgres();

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

const children: ChildProcess[] = [];

/** Spawns the real entry point (src/main.ts through tsx) on `dataDir`. */
function driveway(args: string[], dataDir: string): Run {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('DRIVEWAY_') && !key.startsWith('AWS_')) env[key] = value;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: REPO_ROOT,
    env: {
      ...env,
      DRIVEWAY_DATA_DIR: dataDir,
      DRIVEWAY_STORE_PORT: '0',
      DRIVEWAY_DAV_PORT: '0',
      DRIVEWAY_HOST: '127.0.0.1',
      DRIVEWAY_LOG_LEVEL: 'warn',
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_MS);
  void exited.then(() => clearTimeout(timer));
  return { child, output: () => output, exited };
}

interface Target {
  databaseUrl: string;
  bucket: string;
  endpoint: string;
}

async function freshTarget(): Promise<Target> {
  const [databaseUrl, s3] = await Promise.all([freshPostgresDatabase(), freshS3Bucket()]);
  return { databaseUrl, ...s3 };
}

function migrateArgs(target: Target, batchRows: number): string[] {
  return [
    'migrate',
    '--to-database',
    target.databaseUrl,
    '--to-s3-bucket',
    target.bucket,
    '--to-s3-endpoint',
    target.endpoint,
    '--to-s3-prefix',
    PREFIX,
    '--to-s3-force-path-style',
    '--batch-rows',
    String(batchRows),
  ];
}

/** Runs migrate to its end: exit code and output. */
async function migrate(target: Target, dataDir: string, batchRows = 3): Promise<{ code: number | null; output: string }> {
  const run = driveway(migrateArgs(target, batchRows), dataDir);
  const code = await run.exited;
  return { code, output: run.output() };
}

/** Starts migrate and SIGKILLs it as soon as its output matches `when`; fails if it ends first. */
async function migrateKilled(target: Target, dataDir: string, when: RegExp): Promise<string> {
  const run = driveway(migrateArgs(target, 1), dataDir);
  const deadline = Date.now() + RUN_MS;
  while (!when.test(run.output())) {
    if (run.child.exitCode !== null) throw new Error(`migrate ended (${run.child.exitCode}) before ${when}: ${run.output()}`);
    if (Date.now() > deadline) throw new Error(`no ${when} within ${RUN_MS} ms: ${run.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  run.child.kill('SIGKILL');
  await run.exited;
  return run.output();
}

type Row = Record<string, unknown>;

/** Rows as comparable JSON: Buffers as hex, keys sorted, rows sorted. */
function normalise(rows: Row[]): string[] {
  return rows
    .map((row) =>
      JSON.stringify(
        Object.keys(row)
          .sort()
          .map((key) => [key, Buffer.isBuffer(row[key]) ? `hex:${(row[key] as Buffer).toString('hex')}` : row[key]]),
      ),
    )
    .sort();
}

function sourceTables(db: Database.Database): string[] {
  return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>)
    .map((r) => r.name)
    .filter((name) => !NOT_COPIED.has(name));
}

/** Every copied table row for row, every blob file byte for byte, and the sequence past the copied ids. */
async function expectSameStore(dataDir: string, target: Target): Promise<void> {
  const db = new Database(path.join(dataDir, 'driveway.sqlite'), { readonly: true });
  const storage = new PostgresStorage(target.databaseUrl);
  const s3 = s3rverClient(target.endpoint);
  try {
    const tables = sourceTables(db);
    expect(tables).toEqual(expect.arrayContaining(['users', 'nodes', 'revisions', 'blobs', 'shares', 'login_events', 'group_members', 'avatars', 'stars']));
    for (const table of tables) {
      const source = db.prepare(`SELECT * FROM "${table}"`).all() as Row[];
      const copied = await storage.sql.all<Row>(`SELECT * FROM "${table}"`);
      expect(normalise(copied), `table ${table}`).toEqual(normalise(source));
    }
    expect(await storage.sql.get("SELECT to_regclass('migration_progress')::text AS t")).toEqual({ t: null });

    const files = db.prepare('SELECT hash, size FROM blobs WHERE data IS NULL').all() as Array<{ hash: string; size: number }>;
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const { hash, size } of files) {
      const local = readFileSync(path.join(dataDir, 'blobs', hash.slice(0, 2), hash.slice(2, 4), hash));
      const object = await s3.send(new GetObjectCommand({ Bucket: target.bucket, Key: `${PREFIX}blobs/${hash}` }));
      const bytes = Buffer.from(await (object.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
      expect(bytes.length, `blob ${hash}`).toBe(size);
      expect(bytes.equals(local), `blob ${hash}`).toBe(true);
    }

    // The identity column goes on after the copied ids (and SQLite's AUTOINCREMENT mark).
    const top = (db.prepare("SELECT MAX(seq) AS seq FROM sqlite_sequence WHERE name = 'login_events'").get() as { seq: number }).seq;
    expect(top).toBeGreaterThan(3);
    const sequence = await storage.sql.get<{ last: number }>("SELECT pg_sequence_last_value(pg_get_serial_sequence('login_events', 'id')) AS last");
    expect(sequence?.last).toBeGreaterThanOrEqual(top);
    const next = await storage.sql.get<{ id: number }>("INSERT INTO login_events (action, status, timestamp) VALUES ('login', 'success', 1) RETURNING id");
    expect(next?.id).toBe((sequence?.last ?? 0) + 1);
    await storage.sql.run('DELETE FROM login_events WHERE id = ?', [next?.id]);
  } finally {
    s3.destroy();
    await storage.close();
    db.close();
  }
}

let tmp: ReturnType<typeof makeTmpDir>;
let dataDir: string;

/** An embedded store with a bit of everything, stopped. */
async function buildEmbeddedStore(dir: string): Promise<void> {
  const store = await startTestStore({ dataDir: dir });
  try {
    const seeder = await createSeeder(store);
    const { client, admin } = seeder;
    const alice = await seeder.user('Alice Moved');
    const bob = await seeder.user('Bob Moved');
    const groups = groupAdmin(client, admin);
    const group = await groups.group('Movers');
    await groups.member(group, alice.uuid, { node_permissions: ['read', 'write'] });
    await groups.member(group, bob.uuid);

    let parent = 'home';
    for (let depth = 0; depth < 4; depth++) parent = await createFolder(client, alice.session, parent, `level ${depth}`);
    for (let i = 0; i < 12; i++) await uploadFile(client, alice.session, parent, `small ${i}.txt`, `small file ${i} `.repeat(i + 1));
    const large = Buffer.alloc(100 * 1024, 7);
    const largeFile = await uploadFile(client, alice.session, 'home', 'large.bin', large);
    await uploadFile(client, alice.session, 'home', 'large.bin', Buffer.concat([large, Buffer.from('second revision')]));
    await uploadFile(client, bob.session, 'home', 'bigger.bin', Buffer.alloc(300 * 1024, 9));
    await uploadFile(client, bob.session, 'home', 'again.bin', Buffer.alloc(300 * 1024, 9)); // same bytes: one blob, two refs
    const doomed = await uploadFile(client, alice.session, 'home', 'doomed.bin', Buffer.alloc(70 * 1024, 3));
    await client.remove(alice.session, doomed); // into the trash

    const shared = await createFolder(client, alice.session, 'home', 'shared');
    await uploadFile(client, alice.session, shared, 'note.txt', 'for bob');
    await dataOf(as(client, alice, 'POST', `/api/nodes/${shared}/shares`, { type: 'private', recipients: [bob.uuid], writable: false }));
    await dataOf(as(client, alice, 'POST', `/api/nodes/${largeFile}/shares`, { type: 'public' }));
    expect((await as(client, alice, 'POST', `/api/nodes/${largeFile}`, { starred: true })).status).toBe(204);
    await dataOf(call(client, admin, 'PUT', `/api/groups/${group}`, { avatar: dataUrl(pngBytes()) }));
    // Login history: successes (the seeder's), a failure and a logout.
    await expect(client.login(alice.email, 'wrong password')).rejects.toThrow();
    await client.logout(bob.session);
  } finally {
    await store.close();
  }
  // The WebDAV state (migration 012, once the schema has it): WITHOUT ROWID tables, paged by
  // primary key, and byte budgets kept by triggers, which must arrive as the source counted them.
  const db = new Database(path.join(dir, 'driveway.sqlite'));
  try {
    if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'dav_properties'").get()) {
      for (let i = 0; i < 7; i++) {
        db.prepare("INSERT INTO dav_properties (node_id, ns, local, xml, owner) VALUES (?, 'urn:x', ?, '<x/>', ?)").run(`n${i % 3}`, `p${i}`, i % 2 ? 'alice' : 'bob');
      }
      for (let i = 0; i < 3; i++) {
        db.prepare(
          "INSERT INTO dav_locks (token, resource, parent, chain, root_href, scope, depth, principal, timeout_sec, created_ms, expires_ms, bytes) VALUES (?, ?, '', '[]', '/x', 'shared', '0', ?, 60, 1, 2, 10)",
        ).run(`t${i}`, `r${i}`, i ? 'alice' : 'bob');
        db.prepare('INSERT INTO dav_lock_members (member, token) VALUES (?, ?)').run(`r${i}`, `t${i}`);
      }
    }
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  tmp = makeTmpDir('driveway-migrate-');
  dataDir = path.join(tmp.dir, 'embedded');
  if (postgres.isAvailable) await buildEmbeddedStore(dataDir);
}, 120_000);

afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  tmp?.remove();
});

postgres.describe('driveway migrate: an embedded store into PostgreSQL and S3', () => {
  it('refuses while an instance runs on the data directory, naming its PID, and copies nothing', async () => {
    const instance = driveway([], dataDir);
    const deadline = Date.now() + RUN_MS;
    while (!/driveway WebDAV:/.test(instance.output())) {
      if (instance.child.exitCode !== null) throw new Error(`the instance exited: ${instance.output()}`);
      if (Date.now() > deadline) throw new Error(`the instance did not start: ${instance.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const target = await freshTarget();
    try {
      const refused = await migrate(target, dataDir);
      expect(refused.code, refused.output).toBe(3);
      expect(refused.output).toContain(`process ${instance.child.pid}`);
      expect(refused.output).toContain(dataDir);
    } finally {
      instance.child.kill('SIGTERM');
      await instance.exited;
    }
    const storage = new PostgresStorage(target.databaseUrl);
    try {
      expect(await storage.sql.get("SELECT to_regclass('users')::text AS t")).toEqual({ t: null });
    } finally {
      await storage.close();
    }
  }, RUN_MS);

  it('moves every row and blob, verified, into an empty database and bucket', async () => {
    const target = await freshTarget();
    const run = await migrate(target, dataDir);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/table nodes: \d+\/\d+ rows/);
    expect(run.output).toMatch(/verified: \d+ tables, \d+ rows, checksums equal/);
    expect(run.output).not.toContain(new URL(target.databaseUrl).password);
    await expectSameStore(dataDir, target);

    // Run again on the finished target: it holds a store now, and nothing changes.
    const again = await migrate(target, dataDir);
    expect(again.code, again.output).toBe(2);
    expect(again.output).toMatch(/already holds a store \(3 users\)/);
    await expectSameStore(dataDir, target);
  }, RUN_MS * 2);

  it('without a bucket, leaves the blob files in the data directory, each verified in place', async () => {
    const databaseUrl = await freshPostgresDatabase();
    const run = driveway(['migrate', '--to-database', databaseUrl, '--batch-rows', '2'], dataDir);
    expect(await run.exited, run.output()).toBe(0);
    expect(run.output()).toContain(`blob files stay in ${dataDir}/blobs`);
    expect(run.output()).toMatch(/blobs: 4\/4 verified in place/);
    const db = new Database(path.join(dataDir, 'driveway.sqlite'), { readonly: true });
    const storage = new PostgresStorage(databaseUrl);
    try {
      for (const table of ['blobs', 'revisions', 'nodes']) {
        const source = db.prepare(`SELECT * FROM "${table}"`).all() as Row[];
        expect(normalise(await storage.sql.all<Row>(`SELECT * FROM "${table}"`)), table).toEqual(normalise(source));
      }
    } finally {
      await storage.close();
      db.close();
    }
  }, RUN_MS);

  it('killed in the blob phase and again among the tables, continues to the same result', async () => {
    const target = await freshTarget();
    const first = await migrateKilled(target, dataDir, /blobs: 1\//);
    expect(first).not.toMatch(/table /);
    const second = await migrateKilled(target, dataDir, /table nodes: [1-9]\d*\//);
    expect(second).toContain('resuming the migration');
    const storage = new PostgresStorage(target.databaseUrl);
    try {
      const steps = await storage.sql.all<{ step: string; done: number }>('SELECT step, done FROM migration_progress');
      expect(steps.find((s) => s.step === 'blobs')?.done).toBeGreaterThan(0);
      expect(steps.find((s) => s.step === 'table:nodes')?.done).toBe(0);
    } finally {
      await storage.close();
    }
    const last = await migrate(target, dataDir, 1);
    expect(last.code, last.output).toBe(0);
    expect(last.output).toContain('resuming the migration');
    await expectSameStore(dataDir, target);
  }, RUN_MS * 3);

  it("refuses a database holding another store's unfinished migration", async () => {
    const otherDir = path.join(tmp.dir, 'other');
    const other = await startTestStore({ dataDir: otherDir });
    await other.close();
    const target = await freshTarget();
    await migrateKilled(target, otherDir, /table \w+: 1\//);
    const refused = await migrate(target, dataDir);
    expect(refused.code, refused.output).toBe(2);
    expect(refused.output).toMatch(/holds an unfinished migration of another store/);
  }, RUN_MS * 2);

  it('fails with exit 1 naming the table when the source changed between an interrupted run and its resumption', async () => {
    const changedDir = path.join(tmp.dir, 'changed');
    cpSync(dataDir, changedDir, { recursive: true });
    const target = await freshTarget();
    await migrateKilled(target, changedDir, /table nodes: [1-9]\d*\//);
    const db = new Database(path.join(changedDir, 'driveway.sqlite'));
    expect(db.prepare("UPDATE users SET fullname = 'Alice Changed' WHERE fullname = 'Alice Moved'").run().changes).toBe(1);
    db.close();
    const resumed = await migrate(target, changedDir);
    expect(resumed.code, resumed.output).toBe(1);
    expect(resumed.output).toMatch(/users: same row count \(3\) but different content/);
    expect(resumed.output).not.toMatch(/^done:/m);
  }, RUN_MS * 2);

  it('fails with exit 1 naming the blob whose file does not hash to its address', async () => {
    const damagedDir = path.join(tmp.dir, 'damaged');
    cpSync(dataDir, damagedDir, { recursive: true });
    const db = new Database(path.join(damagedDir, 'driveway.sqlite'), { readonly: true });
    const { hash } = db.prepare('SELECT hash FROM blobs WHERE data IS NULL ORDER BY hash LIMIT 1').get() as { hash: string };
    db.close();
    const file = path.join(damagedDir, 'blobs', hash.slice(0, 2), hash.slice(2, 4), hash);
    const bytes = readFileSync(file);
    bytes[10] = (bytes[10] as number) ^ 0xff;
    writeFileSync(file, bytes);
    const target = await freshTarget();
    const run = await migrate(target, damagedDir);
    expect(run.code, run.output).toBe(1);
    expect(run.output).toContain(`blob ${hash} in ${path.join(damagedDir, 'blobs')}: its bytes hash to`);
  }, RUN_MS);

  it('refuses a source whose schema is older than the code, telling how to upgrade it', async () => {
    const oldDir = path.join(tmp.dir, 'old');
    cpSync(dataDir, oldDir, { recursive: true });
    const db = new Database(path.join(oldDir, 'driveway.sqlite'));
    const top = (db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number }).v;
    db.prepare('DELETE FROM schema_migrations WHERE version = ?').run(top);
    // The version before the newest (numbers may skip: branches reserve theirs).
    const before = (db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number }).v;
    db.close();
    const target = await freshTarget();
    const refused = await migrate(target, oldDir);
    expect(refused.code, refused.output).toBe(2);
    expect(refused.output).toContain(`schema version ${before}, this driveway's is ${top}: start this driveway once`);
  }, RUN_MS);
});
