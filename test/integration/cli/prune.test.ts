/**
 * `driveway prune` as an operator runs it (a real process, `node --import tsx src/main.ts`) on the
 * SQLite data directory of a real store: on a stopped instance a dry run prints what would go and
 * changes no row, a prune removes it and prints per owner with --verbose, disk_used exact; beside
 * a running instance the store sees the result at once; a usage error is one line and exit 2.
 * (What retention removes in detail, on both dialects: test/integration/store/retention.test.ts.)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import { createSeeder, readDiskUsed, uploadFile, type SeededUser } from '../../helpers/seed.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function driveway(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

const tmp = makeTmpDir('driveway-prune-cli-');
const dataDir = path.join(tmp.dir, 'data');
const configFile = path.join(tmp.dir, 'driveway.yaml');
const env = { ...process.env, DRIVEWAY_DATA_DIR: dataDir, DRIVEWAY_LOG_LEVEL: 'warn' };
const prune = (...args: string[]): Promise<Run> => driveway(['prune', '--config', configFile, ...args], env);

let user: SeededUser;
let file = '';

/** Rows retention could change, read from the database file directly (the instance is stopped). */
function rows(): unknown {
  const db = new Database(path.join(dataDir, 'driveway.sqlite'), { readonly: true });
  try {
    return {
      revisions: db.prepare('SELECT node_uuid, revision, size FROM revisions ORDER BY node_uuid, revision').all(),
      blobs: db.prepare('SELECT hash, refs FROM blobs ORDER BY hash').all(),
      used: db.prepare('SELECT uuid, disk_used FROM users ORDER BY uuid').all(),
    };
  } finally {
    db.close();
  }
}

function revisionsOf(fileUuid: string): number[] {
  const db = new Database(path.join(dataDir, 'driveway.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT revision FROM revisions WHERE node_uuid = ? ORDER BY revision').all(fileUuid) as Array<{ revision: number }>).map((r) => r.revision);
  } finally {
    db.close();
  }
}

async function withStore<T>(work: (store: TestStore, upload: (content: string) => Promise<string>) => Promise<T>): Promise<T> {
  const store = await startTestStore({ dataDir, storage: 'sqlite' });
  const seeder = await createSeeder(store);
  try {
    if (!user) user = await seeder.user('Prune Person');
    const session = await seeder.client.login(user.email, 'Secret-Passw0rd');
    return await work(store, (content) => uploadFile(seeder.client, session, 'home', 'notes.txt', content));
  } finally {
    await seeder.client.close();
    await store.close();
  }
}

beforeAll(async () => {
  writeFileSync(configFile, 'store:\n  retention:\n    keepRevisions: 1\n');
  await withStore(async (_store, upload) => {
    for (const content of ['first version', 'second version!', 'third']) file = await upload(content);
  });
}, 60_000);

afterAll(() => tmp.remove());

describe('driveway prune on a stopped instance', () => {
  it('--dry-run prints what would be removed and changes nothing', async () => {
    const before = rows();
    const run = await prune('--dry-run', '--verbose');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('(dry run: nothing is changed)');
    expect(run.stdout).toContain(`user ${user.uuid} (Prune Person): 2 revision(s), 0 trash item(s), 28 bytes`);
    expect(run.stdout).toMatch(/would remove 2 revision\(s\) and 0 trash item\(s\) of 1 of 2 user\(s\) and group\(s\); 28 bytes would be freed\n$/);
    expect(rows()).toEqual(before);
  });

  it('removes the old revisions, frees their bytes and prints per owner with --verbose', async () => {
    const run = await prune('--verbose');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`user ${user.uuid} (Prune Person): 2 revision(s), 0 trash item(s), 28 bytes`);
    expect(run.stdout).toMatch(/removed 2 revision\(s\) and 0 trash item\(s\) of 1 of 2 user\(s\) and group\(s\); 28 bytes freed\n$/);
    expect(revisionsOf(file)).toEqual([3]);
    const used = (rows() as { used: Array<{ uuid: string; disk_used: number }> }).used.find((u) => u.uuid === user.uuid);
    expect(used?.disk_used).toBe('third'.length);
    // Nothing left: a second prune removes nothing.
    expect((await prune()).stdout).toMatch(/removed 0 revision\(s\) and 0 trash item\(s\) of 0 of 2/);
  });

  it('answers an unknown option with one line and exit 2', async () => {
    const run = await prune('--bogus');
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("driveway: unknown option '--bogus'\n");
  });
});

describe('driveway prune beside a running instance', () => {
  it('prunes while the store serves; the store sees the result at once', async () => {
    await withStore(async (store, upload) => {
      await upload('fourth version');
      await upload('fifth');
      expect(await readDiskUsed(store, user.uuid)).toBe('third'.length + 'fourth version'.length + 'fifth'.length);
      const run = await prune();
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/removed 2 revision\(s\)/);
      expect(await readDiskUsed(store, user.uuid)).toBe('fifth'.length);
      const kept = await store.ctx.storage.sql.all<{ revision: number }>('SELECT revision FROM revisions WHERE node_uuid = ?', [file]);
      expect(kept.map((r) => r.revision)).toEqual([5]);
      // The store goes on writing after it.
      await upload('sixth');
      expect(await readDiskUsed(store, user.uuid)).toBe('fifth'.length + 'sixth'.length);
    });
  });
});
