/**
 * src/common/private-files.ts and the places that create files through it, under a umask of 0 in
 * folders made 0755: the explicit modes alone, without main.ts's umask, keep every folder 0700
 * and every file 0600 (SQLite's database and its WAL, lock files, blob folders and files, the
 * bridge's state file, a snapshot), and what an earlier release left open is narrowed. (The real
 * process under umask 000, the backup, the restore and the refusals: test/security/files-at-rest.test.ts.)
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureDataDir, makePrivateDir, makePrivateDirSync, preparePrivateDatabaseFile, securePrivateDir } from '../../../src/common/private-files.js';
import { StartupError } from '../../../src/common/startup-error.js';
import { LocalBlobBackend } from '../../../src/store/blobs/local.js';
import { openDavState } from '../../../src/store/storage/dav-state.js';
import { openDatabase, snapshotDatabaseFile } from '../../../src/store/storage/dialects/sqlite-open.js';
import { lockDataDir } from '../../../src/store/storage/instance-lock.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

let umaskBefore: number;
beforeAll(() => {
  // The worst an operator's shell can hand the process (vitest runs this file in a fork of its own).
  umaskBefore = process.umask(0);
});
afterAll(() => void process.umask(umaskBefore));

let tmp: ReturnType<typeof makeTmpDir>;
/** A folder as an operator makes it: 0755. */
let dir: string;
beforeEach(() => {
  tmp = makeTmpDir('driveway-private-');
  dir = path.join(tmp.dir, 'made-0755');
  mkdirSync(dir, { mode: 0o755 });
});
afterEach(() => tmp.remove());

const modeOf = (file: string): string => `0${(statSync(file).mode & 0o777).toString(8)}`;

describe('private folders', () => {
  it('makes every missing folder 0700, sync and async', async () => {
    makePrivateDirSync(path.join(dir, 'a', 'b'));
    await makePrivateDir(path.join(dir, 'c', 'd'));
    for (const made of ['a', 'a/b', 'c', 'c/d']) expect(modeOf(path.join(dir, made)), made).toBe('0700');
  });

  it('narrows an existing folder open to others to 0700 and says so; a private one is left in silence', () => {
    const said: string[] = [];
    const options = { label: 'backup folder', createHint: 'unused', refusalHint: 'unused', onNarrowed: (line: string, before: string) => said.push(`${before}: ${line}`) };
    securePrivateDir(dir, options);
    expect(modeOf(dir)).toBe('0700');
    expect(said).toEqual([`0755: the backup folder ${dir} was open to other users (mode 0755); made it 0700`]);
    securePrivateDir(dir, options);
    expect(said).toHaveLength(1);
  });

  it('logs a narrowed data folder at warn, naming it', () => {
    const warnings: Array<{ fields: Record<string, unknown>; message: string }> = [];
    ensureDataDir(dir, { warn: (fields, message) => warnings.push({ fields, message }) });
    expect(warnings).toEqual([{ fields: { dataDir: dir, modeBefore: '0755', mode: '0700' }, message: `the data folder ${dir} was open to other users (mode 0755); made it 0700` }]);
  });

  it('names a folder it cannot make and the setting, in one line', () => {
    writeFileSync(path.join(dir, 'a-file'), '');
    const inside = path.join(dir, 'a-file', 'data');
    expect(() => ensureDataDir(inside)).toThrow(StartupError);
    expect(() => ensureDataDir(inside)).toThrow(new RegExp(`^cannot create the data folder ${inside}: .*ENOTDIR.*; check dataDir / DRIVEWAY_DATA_DIR`));
  });
});

describe('SQLite files', () => {
  it('makes a new database file empty and 0600, and narrows an existing one and its -wal, -shm, -journal', () => {
    const fresh = path.join(dir, 'fresh.sqlite');
    preparePrivateDatabaseFile(fresh);
    expect(modeOf(fresh)).toBe('0600');
    expect(readFileSync(fresh)).toHaveLength(0);

    const old = path.join(dir, 'old.sqlite');
    for (const suffix of ['', '-wal', '-shm', '-journal']) writeFileSync(`${old}${suffix}`, 'x', { mode: 0o644 });
    preparePrivateDatabaseFile(old);
    for (const suffix of ['', '-wal', '-shm', '-journal']) expect(modeOf(`${old}${suffix}`), suffix).toBe('0600');
    expect(readFileSync(old, 'utf8')).toBe('x');
  });

  it('leaves a folder named like the database alone (SQLite then says it cannot open it)', () => {
    const folder = path.join(dir, 'driveway.sqlite');
    mkdirSync(folder, { mode: 0o755 });
    preparePrivateDatabaseFile(folder);
    expect(modeOf(folder)).toBe('0755');
  });

  it('opens the store database with the file, its WAL and its index 0600 (SQLite alone makes them 0644)', () => {
    const file = path.join(dir, 'driveway.sqlite');
    const db = openDatabase(file);
    try {
      db.exec('CREATE TABLE IF NOT EXISTS t (x); INSERT INTO t VALUES (1)');
      for (const name of [file, `${file}-wal`, `${file}-shm`]) expect(modeOf(name), name).toBe('0600');
      const copy = path.join(dir, 'snapshot.sqlite');
      snapshotDatabaseFile(file, copy);
      expect(modeOf(copy)).toBe('0600');
    } finally {
      db.close();
    }
  });

  it('makes the lock files and the bridge state file 0600', async () => {
    const lock = lockDataDir(dir, 'store');
    try {
      expect(modeOf(lock.file)).toBe('0600');
      expect(modeOf(dir)).toBe('0700');
    } finally {
      lock.release();
    }
    const stateFile = path.join(dir, 'state', 'bridge.sqlite');
    const state = await openDavState({ stateFile });
    try {
      expect(modeOf(path.dirname(stateFile))).toBe('0700');
      expect(modeOf(stateFile)).toBe('0600');
    } finally {
      await state.close();
    }
  });
});

describe('the local blob backend', () => {
  it('makes blobs/, tmp/ and the fan-out folders 0700 and the blob 0600; an earlier blobs/ left 0755 is narrowed at init', async () => {
    mkdirSync(path.join(dir, 'blobs'), { mode: 0o755 });
    const blobs = new LocalBlobBackend(dir);
    await blobs.init();
    try {
      expect(modeOf(path.join(dir, 'blobs'))).toBe('0700');
      expect(modeOf(path.join(dir, 'tmp'))).toBe('0700');
      const staged = await blobs.stage(Readable.from([Buffer.alloc(100_000, 1)]));
      await blobs.commit(staged);
      await blobs.release(staged.hash);
      const file = blobs.pathOf(staged.hash);
      expect(existsSync(file)).toBe(true);
      expect(modeOf(file)).toBe('0600');
      expect(modeOf(path.dirname(file))).toBe('0700');
      expect(modeOf(path.dirname(path.dirname(file)))).toBe('0700');
    } finally {
      await blobs.close();
    }
  });

  it('narrows only the top of blobs/: what is under it is not walked at start', async () => {
    const nested = path.join(dir, 'blobs', 'ab', 'cd');
    mkdirSync(nested, { recursive: true, mode: 0o755 });
    const blobs = new LocalBlobBackend(dir);
    await blobs.init();
    await blobs.close();
    expect(modeOf(path.join(dir, 'blobs'))).toBe('0700');
    expect(modeOf(nested)).toBe('0755');
  });
});
