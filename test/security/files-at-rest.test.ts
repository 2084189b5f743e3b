/**
 * Issue 21, items 1 and 4: a backup was 0644 in a 0755 folder, and the live database files were
 * 0644 too, so in a data folder an operator had made 0755 any local user read the password
 * hashes, the signing keys and the blobs. The real entry point runs under a umask of 000 (the
 * worst an operator's shell can hand it) on folders made 0755 beforehand: after a start, uploads,
 * a backup and a restore, no file or folder in the data folder, the backup or the restore grants
 * anything to group or others, and the unprivileged user `nobody` cannot read them. What an
 * earlier release left is narrowed at the next start. A folder open to others that driveway
 * cannot close (another user's) is refused with one line naming it and the chmod.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_BASIC, runDriveway, spawnDriveway, type CommandRun, type DrivewayProcess } from '../helpers/driveway-process.js';
import { freshPostgresDatabase, requirePostgres } from '../helpers/postgres.js';
import { requireBinary } from '../helpers/require-binary.js';
import { freshS3Bucket, postgresS3Env } from '../helpers/s3-server.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';

const postgres = requirePostgres();
const runuser = requireBinary('runuser');
/** Reading as another user needs root to switch to it; elsewhere those checks are skipped, said here. */
const canSwitchUser = process.getuid?.() === 0 && runuser.isAvailable;
const nobodyUid = canSwitchUser ? Number(spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).stdout.trim()) : -1;
/**
 * Running driveway itself as nobody also needs this Node.js and this checkout to be reachable by
 * nobody (a Node.js under root's 0700 home is not: .ci/run installs its own where others may run
 * it). Where they are not, the two refusal tests are skipped, said here.
 */
const nobodyRunsDriveway =
  canSwitchUser &&
  spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, '-e', `require('node:fs').accessSync(${JSON.stringify(path.resolve(import.meta.dirname, '../../src/main.ts'))})`], { encoding: 'utf8' }).status === 0;
if (canSwitchUser && !nobodyRunsDriveway) {
  console.warn(`files-at-rest: SKIPPING the refusals run as nobody: nobody cannot run ${process.execPath} or read this checkout`);
}

let tmp: ReturnType<typeof makeTmpDir>;
beforeAll(() => {
  tmp = makeTmpDir('driveway-at-rest-');
  // mkdtemp makes 0700: opened, so that only driveway's own modes stand between `nobody` and the files.
  chmodSync(tmp.dir, 0o755);
});
afterAll(() => tmp.remove());

/** A folder as an operator makes it with `mkdir` under umask 022: 0755, empty. */
function operatorDir(name: string): string {
  const dir = path.join(tmp.dir, name);
  mkdirSync(dir);
  chmodSync(dir, 0o755);
  return dir;
}

/** `dir` and everything under it. */
function walk(dir: string): string[] {
  const all = [dir];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) all.push(...walk(full));
    else all.push(full);
  }
  return all;
}

const modeOf = (file: string): string => `0${(statSync(file).mode & 0o777).toString(8)}`;

/** Every entry under `dir` that grants group or others anything, as `0644 <path>`. */
function openToOthers(dir: string): string[] {
  return walk(dir)
    .filter((entry) => (statSync(entry).mode & 0o077) !== 0)
    .map((entry) => `${modeOf(entry)} ${entry}`);
}

/** `cat` as nobody: what another local user could read. */
function readAsNobody(file: string): { status: number | null; stderr: string } {
  const run = spawnSync('runuser', ['-u', 'nobody', '--', 'cat', file], { encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr };
}

/** Bytes big enough to be a blob file (small ones live in their database row). */
const bigFile = Buffer.alloc(300_000, 7);

async function put(server: DrivewayProcess, name: string, body: Buffer): Promise<void> {
  const response = await fetch(`${server.davUrl.replace(/\/$/, '')}/home/${name}`, { method: 'PUT', headers: { authorization: ADMIN_BASIC }, body });
  await response.arrayBuffer();
  expect([201, 204]).toContain(response.status);
}

/**
 * A Nextcloud v1 chunked upload left unassembled: one chunk written at its place in the
 * upload's file (store/blobs/staged-parts.ts) and the same chunk again, a part file of its own.
 */
async function leaveChunkedUpload(server: DrivewayProcess): Promise<void> {
  const folder = `${server.davUrl.replace(/\/$/, '')}/remote.php/dav/uploads/admin/left-at-rest`;
  const mkcol = await fetch(folder, { method: 'MKCOL', headers: { authorization: ADMIN_BASIC } });
  await mkcol.arrayBuffer();
  expect(mkcol.status).toBe(201);
  for (const expected of [201, 204]) {
    const chunk = await fetch(`${folder}/000000000000000-000000000299999`, { method: 'PUT', headers: { authorization: ADMIN_BASIC }, body: bigFile });
    await chunk.arrayBuffer();
    expect(chunk.status).toBe(expected);
  }
}

async function stop(server: DrivewayProcess): Promise<void> {
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
}

describe('files at rest on SQLite, under umask 000, in folders made 0755', () => {
  let dataDir: string;
  let backupDir: string;
  let restoredDir: string;
  let server: DrivewayProcess | undefined;
  let backup: CommandRun;
  let restore: CommandRun;

  beforeAll(async () => {
    dataDir = operatorDir('data');
    backupDir = operatorDir('backup');
    restoredDir = operatorDir('restored');
    server = await spawnDriveway({ dataDir, umask: '000', env: { DRIVEWAY_LOG_LEVEL: 'warn' } });
    await put(server, 'big.bin', bigFile);
    await put(server, 'small.txt', Buffer.from('small'));
    await leaveChunkedUpload(server);
    backup = await runDriveway(['backup', backupDir], { umask: '000', env: { DRIVEWAY_DATA_DIR: dataDir } });
    restore = await runDriveway(['restore', backupDir], { umask: '000', env: { DRIVEWAY_DATA_DIR: restoredDir } });
  }, 120_000);

  afterAll(() => server?.kill());

  it('narrows the data folder at start and logs it at warn, naming it', () => {
    const warning = (server as DrivewayProcess)
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string; dataDir?: string; modeBefore?: string })
      .find((line) => line.msg.includes('open to other users'));
    expect(warning).toMatchObject({ level: 40, dataDir, modeBefore: '0755', msg: `the data folder ${dataDir} was open to other users (mode 0755); made it 0700` });
  });

  it('backs up and restores, and the backup says it narrowed its folder', () => {
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stderr).toBe(`driveway backup: the backup folder ${backupDir} was open to other users (mode 0755); made it 0700\n`);
    expect(restore.code, restore.stderr).toBe(0);
  });

  it('leaves nothing that group or others may read or enter: live data folder, backup, restore', () => {
    // What the walk must have seen, so that an empty answer means something.
    const seen = [...walk(dataDir), ...walk(backupDir), ...walk(restoredDir)].map((entry) => path.relative(tmp.dir, entry));
    for (const name of ['driveway.sqlite', 'driveway.sqlite-wal', 'driveway.sqlite-shm', 'store.lock', 'bridge.lock', 'blobs', 'tmp']) expect(seen).toContain(path.join('data', name));
    // The chunked upload left behind: its folder, its file and the part of its own beside it.
    const upload = seen.filter((entry) => entry.startsWith(path.join('data', 'uploads')));
    expect(upload.length, upload.join(', ')).toBeGreaterThanOrEqual(4);
    expect(upload.filter((entry) => /^data\/uploads\/[^/]+\/data$/.test(entry))).toHaveLength(1);
    for (const name of ['driveway.sqlite', 'manifest.json', 'blobs']) expect(seen).toContain(path.join('backup', name));
    for (const name of ['driveway.sqlite', 'store.lock', 'blobs']) expect(seen).toContain(path.join('restored', name));
    expect(seen.filter((entry) => /^(data|backup|restored)\/blobs\/..\/..\/[0-9a-f]{64}$/.test(entry))).toHaveLength(3);

    expect(openToOthers(dataDir)).toEqual([]);
    expect(openToOthers(backupDir)).toEqual([]);
    expect(openToOthers(restoredDir)).toEqual([]);
  });

  it.runIf(canSwitchUser)('leaves nothing another local user can read (as nobody)', () => {
    // The check itself works: nobody reads a file that lets it.
    const control = path.join(tmp.dir, 'readable.txt');
    writeFileSync(control, 'anyone', { mode: 0o644 });
    expect(readAsNobody(control).status).toBe(0);

    const blob = (dir: string): string => walk(path.join(dir, 'blobs')).find((entry) => /[0-9a-f]{64}$/.test(entry)) as string;
    for (const file of [
      path.join(dataDir, 'driveway.sqlite'),
      path.join(dataDir, 'driveway.sqlite-wal'),
      blob(dataDir),
      walk(path.join(dataDir, 'uploads')).find((entry) => entry.endsWith(`${path.sep}data`)) as string,
      path.join(backupDir, 'driveway.sqlite'),
      path.join(backupDir, 'manifest.json'),
      blob(backupDir),
      path.join(restoredDir, 'driveway.sqlite'),
    ]) {
      const read = readAsNobody(file);
      expect(read.status, file).not.toBe(0);
      expect(read.stderr, file).toContain('Permission denied');
    }
  });

  it.runIf(nobodyRunsDriveway)("refuses a backup folder open to others that is another user's, exit 2, writing nothing", async () => {
    // A data folder of nobody's (a copy of the restored one), and a 0755 folder of root's to back up into.
    const nobodyData = path.join(tmp.dir, 'nobody-data');
    cpSync(restoredDir, nobodyData, { recursive: true });
    for (const entry of walk(nobodyData)) chownSync(entry, nobodyUid, nobodyUid);
    const target = operatorDir('root-owned-backup');
    const run = await runDriveway(['backup', target], { user: 'nobody', env: { DRIVEWAY_DATA_DIR: nobodyData } });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toBe(
      `driveway backup: the backup folder ${target} is open to other users (mode 0755) and this user (uid ${nobodyUid}) cannot change that (it belongs to uid 0): ` +
        `run \`chmod 700 ${target}\` as its owner, or back up into a folder of this user's\n`,
    );
    expect(readdirSync(target)).toEqual([]);
  });

  it('narrows at the next start what an earlier release left open (database and its WAL, locks, blobs/, the folder)', async () => {
    // Killed, so that the WAL and its index stay behind as a crash leaves them.
    (server as DrivewayProcess).child.kill('SIGKILL');
    await (server as DrivewayProcess).exited;
    server = undefined;
    chmodSync(dataDir, 0o755);
    for (const name of ['driveway.sqlite', 'driveway.sqlite-wal', 'driveway.sqlite-shm', 'store.lock', 'bridge.lock']) chmodSync(path.join(dataDir, name), 0o644);
    chmodSync(path.join(dataDir, 'blobs'), 0o755);
    server = await spawnDriveway({ dataDir, umask: '000', env: { DRIVEWAY_LOG_LEVEL: 'warn' } });
    expect(modeOf(dataDir)).toBe('0700');
    for (const name of ['driveway.sqlite', 'driveway.sqlite-wal', 'driveway.sqlite-shm', 'store.lock', 'bridge.lock']) expect(modeOf(path.join(dataDir, name)), name).toBe('0600');
    expect(modeOf(path.join(dataDir, 'blobs'))).toBe('0700');
    await stop(server);
    server = undefined;
  }, 60_000);
});

postgres.describe('files at rest on PostgreSQL + S3, under umask 000, in folders made 0755', () => {
  let server: DrivewayProcess | undefined;
  afterAll(() => server?.kill());

  it('the backup taken from PostgreSQL, and the data folder, grant nothing to group or others', async () => {
    const [databaseUrl, s3] = await Promise.all([freshPostgresDatabase(), freshS3Bucket()]);
    const dataDir = operatorDir('pg-data');
    const backupDir = operatorDir('pg-backup');
    const env = postgresS3Env(databaseUrl, s3);
    server = await spawnDriveway({ dataDir, umask: '000', env: { ...env, DRIVEWAY_LOG_LEVEL: 'warn' } });
    await put(server, 'big.bin', bigFile);
    const backup = await runDriveway(['backup', backupDir], { umask: '000', env: { ...env, DRIVEWAY_DATA_DIR: dataDir } });
    expect(backup.code, backup.stderr).toBe(0);

    const seen = walk(backupDir).map((entry) => path.relative(backupDir, entry));
    expect(seen).toEqual(expect.arrayContaining(['driveway.sqlite', 'manifest.json', 'blobs']));
    expect(seen.filter((entry) => /[0-9a-f]{64}$/.test(entry))).toHaveLength(1);
    expect(openToOthers(backupDir)).toEqual([]);
    expect(openToOthers(dataDir)).toEqual([]);
    if (canSwitchUser) expect(readAsNobody(path.join(backupDir, 'driveway.sqlite')).status).not.toBe(0);
    await stop(server);
    server = undefined;
  }, 120_000);
});

describe.runIf(nobodyRunsDriveway)('a data folder open to others that driveway cannot close', () => {
  it("is refused at start with one line naming it and the chmod, and nothing is written into it", async () => {
    const dataDir = operatorDir('not-nobodys');
    const run = await runDriveway([], {
      user: 'nobody',
      env: { DRIVEWAY_DATA_DIR: dataDir, DRIVEWAY_HOST: '127.0.0.1', DRIVEWAY_STORE_PORT: '0', DRIVEWAY_DAV_PORT: '0' },
      timeoutMs: 30_000,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `driveway serve: failed: the data folder ${dataDir} is open to other users (mode 0755) and this user (uid ${nobodyUid}) cannot change that (it belongs to uid 0): ` +
        `run \`chmod 700 ${dataDir}\` as its owner, or set dataDir / DRIVEWAY_DATA_DIR to a folder of this user's\n`,
    );
    expect(readdirSync(dataDir)).toEqual([]);
    expect(modeOf(dataDir)).toBe('0755');
  });
});
