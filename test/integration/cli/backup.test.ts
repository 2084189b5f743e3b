/**
 * `driveway backup` and `driveway restore` as an operator runs them: real processes (the server,
 * and the commands beside it), real files and folders, and PostgreSQL + s3rver as a restore
 * target. A backup is taken while a bounded loop of PUTs runs through the live server's WebDAV
 * bridge; the restored instance must serve, for every name, a content the server had at the
 * snapshot (one of the versions PUT, no older than the last PUT finished before the backup began,
 * none begun after it ended), and `driveway check` on it must be clean (blobs, hashes, disk_used
 * exact). Then the refusals: a non-empty backup folder, a data directory holding a database, a
 * running instance, and a damaged blob named by its hash with nothing written.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_BASIC, spawnDriveway, type DrivewayProcess } from '../../helpers/driveway-process.js';
import { freshPostgresDatabase, requirePostgres } from '../../helpers/postgres.js';
import { freshS3Bucket, postgresS3Env } from '../../helpers/s3-server.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const postgres = requirePostgres();
const NAMES = 6;
const MAX_PUTS = 300;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function driveway(args: string[], env: Record<string, string>): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, DRIVEWAY_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** The bytes of version `i` of a file: sizes from a few bytes (inline in the row) to 300 KB (a blob file). */
function contentOf(i: number): Buffer {
  const size = [10, 70_000, 300_000, 1_000, 150_000][i % 5] as number;
  const out = Buffer.alloc(size);
  let seed = createHash('sha256').update(`version ${i}`).digest();
  for (let at = 0; at < size; at += seed.length) {
    seed.copy(out, at);
    seed = createHash('sha256').update(seed).digest();
  }
  return out;
}

const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
const nameOf = (i: number): string => `f${i % NAMES}.bin`;

interface Put {
  i: number;
  name: string;
  sha: string;
  startMs: number;
  endMs: number;
}

async function put(davUrl: string, name: string, body: Buffer): Promise<number> {
  const response = await fetch(`${davUrl}/home/${name}`, { method: 'PUT', headers: { authorization: ADMIN_BASIC }, body });
  await response.arrayBuffer();
  return response.status;
}

async function get(davUrl: string, name: string): Promise<{ status: number; sha?: string }> {
  const response = await fetch(`${davUrl}/home/${name}`, { headers: { authorization: ADMIN_BASIC } });
  const body = Buffer.from(await response.arrayBuffer());
  return response.status === 200 ? { status: 200, sha: sha(body) } : { status: response.status };
}

/** What the restored instance serves must be what the server held at some instant inside the backup's run. */
async function expectSnapshotContent(davUrl: string, puts: readonly Put[], window: { startMs: number; endMs: number }): Promise<number> {
  let present = 0;
  for (let n = 0; n < NAMES; n += 1) {
    const name = nameOf(n);
    const mine = puts.filter((p) => p.name === name);
    const settledBefore = mine.filter((p) => p.endMs < window.startMs).at(-1);
    const got = await get(davUrl, name);
    if (got.status === 404) {
      expect(settledBefore, `${name} was written before the backup began, yet is missing`).toBeUndefined();
      continue;
    }
    expect(got.status, name).toBe(200);
    present += 1;
    const version = mine.find((p) => p.sha === got.sha);
    expect(version, `${name} has a content the server never held`).toBeDefined();
    expect(version!.startMs, `${name} holds a version begun after the backup ended`).toBeLessThan(window.endMs);
    if (settledBefore) expect(version!.i, `${name} holds a version older than the one written before the backup began`).toBeGreaterThanOrEqual(settledBefore.i);
  }
  return present;
}

/** Starts a server on `env`, PUTs every name once, then takes a backup while a bounded loop of PUTs runs. */
async function backupUnderLoad(env: Record<string, string>, backupDir: string): Promise<{ server: DrivewayProcess; puts: Put[]; window: { startMs: number; endMs: number }; putsDuringBackup: number }> {
  const puts: Put[] = [];
  const server = await spawnDriveway({ dataDir: env.DRIVEWAY_DATA_DIR as string, env: { ...env, DRIVEWAY_LOG_LEVEL: 'warn' } });
  const davUrl = server.davUrl.replace(/\/$/, '');
  // Every name once before the backup, then PUTs all through it (bounded), sequential: i orders them in time.
  let i = 0;
  const one = async (): Promise<void> => {
    const body = contentOf(i);
    const startMs = Date.now();
    const status = await put(davUrl, nameOf(i), body);
    expect([201, 204]).toContain(status);
    puts.push({ i, name: nameOf(i), sha: sha(body), startMs, endMs: Date.now() });
    i += 1;
  };
  while (i < NAMES) await one();
  let backupDone = false;
  const loop = (async () => {
    while (!backupDone && i < MAX_PUTS) await one();
  })();
  const window = { startMs: Date.now(), endMs: 0 };
  const backup = await driveway(['backup', backupDir], env);
  window.endMs = Date.now();
  backupDone = true;
  await loop;
  expect(backup.stderr).toBe('');
  expect(backup.code).toBe(0);
  expect(backup.stdout).toMatch(/^backup of .* in .*: schema \d+, \d+ tables, \d+ rows, \d+ blob files \(\d+ bytes\), database sha256 [0-9a-f]{64}\n$/);
  const putsDuringBackup = puts.filter((p) => p.startMs > window.startMs && p.startMs < window.endMs).length;
  return { server, puts, window, putsDuringBackup };
}

describe('driveway backup and restore', () => {
  let tmp: ReturnType<typeof makeTmpDir>;
  let server: DrivewayProcess | undefined;
  let restored: DrivewayProcess | undefined;
  const puts: Put[] = [];
  let window = { startMs: 0, endMs: 0 };
  let backupDir: string;
  let sourceEnv: Record<string, string>;
  let putsDuringBackup = 0;

  beforeAll(async () => {
    tmp = makeTmpDir('driveway-backup-');
    backupDir = path.join(tmp.dir, 'backup');
    sourceEnv = { DRIVEWAY_DATA_DIR: path.join(tmp.dir, 'data') };
    const taken = await backupUnderLoad(sourceEnv, backupDir);
    server = taken.server;
    puts.push(...taken.puts);
    window = taken.window;
    putsDuringBackup = taken.putsDuringBackup;
  }, 180_000);

  afterAll(async () => {
    server?.kill();
    restored?.kill();
    tmp?.remove();
  });

  it('wrote the database, the blob files and a manifest that names them, while PUTs ran through the server', () => {
    expect(putsDuringBackup).toBeGreaterThan(0);
    const manifest = JSON.parse(readFileSync(path.join(backupDir, 'manifest.json'), 'utf8')) as {
      format: number;
      schemaVersion: number;
      database: { file: string; bytes: number; sha256: string };
      blobs: { files: number; bytes: number };
      tables: Record<string, number>;
    };
    expect(manifest.format).toBe(1);
    const db = readFileSync(path.join(backupDir, 'driveway.sqlite'));
    expect(manifest.database).toEqual({ file: 'driveway.sqlite', bytes: db.length, sha256: sha(db) });
    expect(manifest.tables.users).toBeGreaterThanOrEqual(1);
    expect(manifest.blobs.files).toBeGreaterThan(0);
    expect(readdirSync(backupDir).sort()).toEqual(['blobs', 'driveway.sqlite', 'manifest.json']);
  });

  it('explains itself with --help, and a missing folder is a usage error (exit 2)', async () => {
    for (const command of ['backup', 'restore']) {
      const help = await driveway([command, '--help'], sourceEnv);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: driveway ${command} \\[options\\] <dir>`));
      const missing = await driveway([command], sourceEnv);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toBe("driveway: missing required argument 'dir'\n");
    }
  });

  it('refuses a backup folder that is not empty, exit 2, and adds nothing to it', async () => {
    const before = readdirSync(backupDir).sort();
    const run = await driveway(['backup', backupDir], sourceEnv);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`driveway backup: ${backupDir} is not empty: back up into a new or empty folder\n`);
    expect(readdirSync(backupDir).sort()).toEqual(before);
  });

  it('refuses to restore into the data directory of a running instance, exit 3', async () => {
    const run = await driveway(['restore', backupDir], sourceEnv);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^driveway restore: the data directory .* is in use by process \d+/);
  });

  it('restores into an empty data directory: check is clean, and the restarted instance serves what the server held at the snapshot', async () => {
    const dataDir = path.join(tmp.dir, 'restored');
    const run = await driveway(['restore', backupDir], { DRIVEWAY_DATA_DIR: dataDir });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/backup verified: database SHA-256 and \d+ blob file\(s\)/);
    expect(existsSync(path.join(dataDir, 'driveway.sqlite.restoring'))).toBe(false);
    // oc:data-fingerprint (docs/extensions.md "Numeric file ids"): the PUTs' OC-FileId made one
    // in the source; the restored database has none, so its first start makes a new one. The
    // numeric file ids go on from where the source's counter stood.
    const fingerprints = (file: string) => {
      const db = new Database(file, { readonly: true });
      try {
        return {
          fingerprints: (db.prepare("SELECT COUNT(*) AS n FROM dav_instance WHERE name = 'data_fingerprint'").get() as { n: number }).n,
          counter: (db.prepare('SELECT last FROM node_file_id_counter').get() as { last: number }).last,
        };
      } finally {
        db.close();
      }
    };
    const before = fingerprints(path.join(backupDir, 'driveway.sqlite'));
    expect(before.fingerprints).toBe(1);
    expect(fingerprints(path.join(dataDir, 'driveway.sqlite'))).toEqual({ fingerprints: 0, counter: before.counter });

    const check = await driveway(['check'], { DRIVEWAY_DATA_DIR: dataDir });
    expect(check.stdout, check.stderr).toMatch(/\nclean\n$/);
    expect(check.code).toBe(0);

    restored = await spawnDriveway({ dataDir, env: { DRIVEWAY_LOG_LEVEL: 'warn' } });
    const present = await expectSnapshotContent(restored.davUrl.replace(/\/$/, ''), puts, window);
    expect(present).toBe(NAMES);
    restored.child.kill('SIGTERM');
    await restored.exited;
    restored = undefined;
  }, 120_000);

  it('refuses a data directory that holds a database, exit 2, and changes nothing there', async () => {
    const dataDir = path.join(tmp.dir, 'restored');
    const before = statSync(path.join(dataDir, 'driveway.sqlite')).mtimeMs;
    const run = await driveway(['restore', backupDir], { DRIVEWAY_DATA_DIR: dataDir });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^driveway restore: .* already holds a database .*: restore into an empty data directory\n$/);
    expect(statSync(path.join(dataDir, 'driveway.sqlite')).mtimeMs).toBe(before);
  });

  it('refuses a backup with a damaged blob, naming its hash, exit 1, and writes nothing', async () => {
    const damaged = path.join(tmp.dir, 'damaged-backup');
    cpSync(backupDir, damaged, { recursive: true });
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else files.push(full);
      }
    };
    walk(path.join(damaged, 'blobs'));
    const victim = files.sort()[0] as string;
    const bytes = readFileSync(victim);
    bytes[0] = (bytes[0] as number) ^ 0xff;
    writeFileSync(victim, bytes);

    const dataDir = path.join(tmp.dir, 'never');
    const run = await driveway(['restore', damaged], { DRIVEWAY_DATA_DIR: dataDir });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`blob ${path.basename(victim)} in ${path.join(damaged, 'blobs')}: its bytes hash to`);
    expect(run.stderr).toMatch(/nothing was restored\n$/);
    expect(existsSync(path.join(dataDir, 'driveway.sqlite'))).toBe(false);
    expect(existsSync(path.join(dataDir, 'blobs')) ? readdirSync(path.join(dataDir, 'blobs')) : []).toEqual([]);
  });

  it('refuses a backup whose database does not match its manifest, exit 1', async () => {
    const damaged = path.join(tmp.dir, 'damaged-db');
    cpSync(backupDir, damaged, { recursive: true });
    writeFileSync(path.join(damaged, 'driveway.sqlite'), Buffer.concat([readFileSync(path.join(damaged, 'driveway.sqlite')), Buffer.from('x')]));
    const run = await driveway(['restore', damaged], { DRIVEWAY_DATA_DIR: path.join(tmp.dir, 'never2') });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/driveway\.sqlite is damaged: its SHA-256 is [0-9a-f]{64}, the manifest says [0-9a-f]{64}\n$/);
  });

  it('names a blob the snapshot refers to that is gone from the backend, exit 1, and writes no manifest', async () => {
    const db = new Database(path.join(backupDir, 'driveway.sqlite'), { readonly: true });
    const { hash } = db.prepare('SELECT hash FROM blobs WHERE data IS NULL ORDER BY hash LIMIT 1').get() as { hash: string };
    db.close();
    rmSync(path.join(sourceEnv.DRIVEWAY_DATA_DIR as string, 'blobs', hash.slice(0, 2), hash.slice(2, 4), hash));
    const incomplete = path.join(tmp.dir, 'incomplete');
    const run = await driveway(['backup', incomplete], sourceEnv);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`blob ${hash} is named by the snapshot but gone from the blob backend`);
    expect(run.stderr).toMatch(/the backup in .* is incomplete \(no manifest\.json\): take it again into an empty folder\n$/);
    expect(existsSync(path.join(incomplete, 'manifest.json'))).toBe(false);
    const refused = await driveway(['restore', incomplete], { DRIVEWAY_DATA_DIR: path.join(tmp.dir, 'never3') });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/holds no manifest\.json: not a driveway backup, or an incomplete one\n$/);
  });

  postgres.describe('into PostgreSQL + S3', () => {
  it('restores into a fresh PostgreSQL database and S3 bucket: check is clean and the instance serves the snapshot; a second restore is refused', async () => {
    const [databaseUrl, s3] = await Promise.all([freshPostgresDatabase(), freshS3Bucket()]);
    const env = {
      DRIVEWAY_DATA_DIR: path.join(tmp.dir, 'pg-data'),
      ...postgresS3Env(databaseUrl, s3),
    };
    const run = await driveway(['restore', backupDir], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(readdirSync(backupDir).sort()).toEqual(['blobs', 'driveway.sqlite', 'manifest.json']);

    const check = await driveway(['check'], env);
    expect(check.stdout, check.stderr).toMatch(/\nclean\n$/);
    expect(check.code).toBe(0);

    const again = await driveway(['restore', backupDir], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already holds a store/);

    restored = await spawnDriveway({ dataDir: env.DRIVEWAY_DATA_DIR, env: { ...env, DRIVEWAY_LOG_LEVEL: 'warn' } });
    expect(await expectSnapshotContent(restored.davUrl.replace(/\/$/, ''), puts, window)).toBe(NAMES);
    restored.child.kill('SIGTERM');
    await restored.exited;
    restored = undefined;
  }, 120_000);
  });
});

postgres.describe('driveway backup of a PostgreSQL + S3 store', () => {
  let tmp: ReturnType<typeof makeTmpDir>;
  let server: DrivewayProcess | undefined;
  let restored: DrivewayProcess | undefined;

  afterAll(async () => {
    server?.kill();
    restored?.kill();
    tmp?.remove();
  });

  it('takes a consistent backup while PUTs run; it restores into an empty SQLite data directory that checks clean and serves the snapshot', async () => {
    tmp = makeTmpDir('driveway-backup-pg-');
    const [databaseUrl, s3] = await Promise.all([freshPostgresDatabase(), freshS3Bucket()]);
    const env = {
      DRIVEWAY_DATA_DIR: path.join(tmp.dir, 'pg-data'),
      ...postgresS3Env(databaseUrl, s3),
    };
    const backupDir = path.join(tmp.dir, 'backup');
    const taken = await backupUnderLoad(env, backupDir);
    server = taken.server;
    expect(taken.putsDuringBackup).toBeGreaterThan(0);
    const manifest = JSON.parse(readFileSync(path.join(backupDir, 'manifest.json'), 'utf8')) as { source: { dialect: string; blobs: string } };
    expect(manifest.source).toEqual({ dialect: 'postgres', blobs: 's3' });

    const dataDir = path.join(tmp.dir, 'restored');
    const run = await driveway(['restore', backupDir], { DRIVEWAY_DATA_DIR: dataDir });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const check = await driveway(['check'], { DRIVEWAY_DATA_DIR: dataDir });
    expect(check.stdout, check.stderr).toMatch(/\nclean\n$/);
    expect(check.code).toBe(0);
    restored = await spawnDriveway({ dataDir, env: { DRIVEWAY_LOG_LEVEL: 'warn' } });
    expect(await expectSnapshotContent(restored.davUrl.replace(/\/$/, ''), taken.puts, taken.window)).toBe(NAMES);
  }, 180_000);
});
