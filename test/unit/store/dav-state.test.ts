/**
 * The bridge's own state file (src/store/storage/dav-state.ts): the PropertyRepository contract over
 * it, its upgrades in place from earlier releases, and its one-time move into shared storage.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqlPropertyRepository } from '../../../src/store/storage/dav-properties.js';
import { migrationsOf } from '../../../src/store/storage/migrations.js';
import { SqlUploadSessionRepository } from '../../../src/store/storage/upload-sessions.js';
import { moveStateFileInto, openBridgeStateFile, STATE_FILE_VERSION } from '../../../src/store/storage/dav-state.js';
import type { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import { describePropertyRepository } from '../../contract/property-repository.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function stateFile(): string {
  const tmp = makeTmpDir('driveway-deadprops-');
  cleanups.push(() => tmp.remove());
  return path.join(tmp.dir, 'bridge.sqlite');
}

function open(file: string): SqliteStorage {
  const storage = openBridgeStateFile(file);
  cleanups.push(() => storage.close());
  return storage;
}

const WIN_NS = 'urn:schemas-microsoft-com:';
const win = (local: string, value: string) => ({ ns: WIN_NS, local, xml: `<Z:${local} xmlns:Z="${WIN_NS}">${value}</Z:${local}>` });
const weight = (p: { ns: string; local: string; xml: string }) => Buffer.byteLength(p.xml) + Buffer.byteLength(p.ns) + Buffer.byteLength(p.local);

describePropertyRepository('a bridge.sqlite of its own', () => {
  let storage: SqliteStorage | undefined;
  let remove: (() => void) | undefined;
  return {
    async open() {
      const tmp = makeTmpDir('driveway-deadprops-');
      remove = () => tmp.remove();
      storage = openBridgeStateFile(path.join(tmp.dir, 'bridge.sqlite'));
      return storage.sql;
    },
    async close() {
      await storage?.close();
      remove?.();
    },
  };
});

/** A bridge.sqlite as an earlier release left it: version 1 (no owners) or 2 (owners, usage, triggers). */
function legacyFile(file: string, version: 1 | 2): void {
  const raw = new Database(file);
  raw.exec(`CREATE TABLE dead_properties (node_id TEXT NOT NULL, ns TEXT NOT NULL, local TEXT NOT NULL, xml TEXT NOT NULL, PRIMARY KEY (node_id, ns, local)) WITHOUT ROWID;
    CREATE TABLE client_mtimes (node_id TEXT PRIMARY KEY, mtime_ms INTEGER NOT NULL) WITHOUT ROWID;`);
  if (version === 2) {
    // Release 2's schema, as its migration wrote it (the triggers kept the usage table).
    raw.exec(`ALTER TABLE dead_properties ADD COLUMN owner TEXT NOT NULL DEFAULT '';
      CREATE TABLE dead_property_usage (owner TEXT PRIMARY KEY, bytes INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TRIGGER dead_properties_charge AFTER INSERT ON dead_properties BEGIN
        INSERT INTO dead_property_usage (owner, bytes) SELECT NEW.owner, 0 WHERE NOT EXISTS (SELECT 1 FROM dead_property_usage WHERE owner = NEW.owner);
        UPDATE dead_property_usage SET bytes = bytes + length(CAST(NEW.xml AS BLOB)) + length(CAST(NEW.ns AS BLOB)) + length(CAST(NEW.local AS BLOB)) WHERE owner = NEW.owner;
      END;`);
    raw.prepare('INSERT INTO dead_properties (node_id, ns, local, xml, owner) VALUES (?, ?, ?, ?, ?)').run('n1', WIN_NS, 'a', win('a', '1').xml, 'alice');
    raw.prepare('INSERT INTO dead_properties (node_id, ns, local, xml, owner) VALUES (?, ?, ?, ?, ?)').run('n2', WIN_NS, 'b', win('b', '2').xml, 'bob');
  } else {
    raw.prepare('INSERT INTO dead_properties VALUES (?, ?, ?, ?)').run('n1', WIN_NS, 'a', win('a', '1').xml);
  }
  raw.prepare('INSERT INTO client_mtimes VALUES (?, ?)').run('n1', 1_577_836_800_000);
  raw.pragma(`user_version = ${version}`);
  raw.close();
}

describe('the bridge state file', () => {
  it('creates its schema in WAL mode and reopens an existing file', async () => {
    const file = stateFile();
    const first = openBridgeStateFile(file);
    await new SqlPropertyRepository(first.sql).set('n1', win('Win32FileAttributes', '00000020'));
    await first.close();
    const reopened = open(file);
    expect(await new SqlPropertyRepository(reopened.sql).list('n1')).toEqual([win('Win32FileAttributes', '00000020')]);
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.pragma('user_version', { simple: true })).toBe(STATE_FILE_VERSION);
    raw.close();
  });

  it('refuses a file written by a newer bridge', async () => {
    const file = stateFile();
    await openBridgeStateFile(file).close();
    const raw = new Database(file);
    raw.pragma('user_version = 99');
    raw.close();
    expect(() => openBridgeStateFile(file)).toThrow(/schema 99/);
  });

  it('migrates a version 1 file: its properties and mtimes are kept, charged to nobody until patched again', async () => {
    const file = stateFile();
    legacyFile(file, 1);
    const store = new SqlPropertyRepository(open(file).sql);
    expect(await store.list('n1')).toEqual([win('a', '1')]);
    expect(await store.getMtime('n1')).toBe(1_577_836_800_000);
    expect(await store.ownerBytes('')).toBe(weight(win('a', '1')));
    await store.apply('n1', [{ op: 'set', ...win('b', '2') }], 'alice');
    expect(await store.ownerBytes('')).toBe(0);
    expect(await store.ownerBytes('alice')).toBe((await store.list('n1')).reduce((sum, p) => sum + weight(p), 0));
  });

  it('migrates a version 2 file: properties keep their owners, the totals are recounted, the old tables go', async () => {
    const file = stateFile();
    legacyFile(file, 2);
    const storage = open(file);
    const store = new SqlPropertyRepository(storage.sql);
    expect(await store.list('n1')).toEqual([win('a', '1')]);
    expect(await store.getMtime('n1')).toBe(1_577_836_800_000);
    expect(await store.ownerBytes('alice')).toBe(weight(win('a', '1')));
    expect(await store.ownerBytes('bob')).toBe(weight(win('b', '2')));
    const tables = (await storage.sql.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")).map((t) => t.name);
    expect(tables).not.toContain('dead_properties');
    expect(tables).not.toContain('dead_property_usage');
    expect(tables).toContain('dav_locks');
  });

  it('upgrades a version 3 file in place: its properties stay and upload sessions can be kept', async () => {
    const file = stateFile();
    const raw = new Database(file);
    raw.exec(migrationsOf('sqlite').find((m) => m.version === 12)?.sql ?? '');
    raw.prepare('INSERT INTO dav_properties (node_id, ns, local, xml, owner) VALUES (?, ?, ?, ?, ?)').run('n1', WIN_NS, 'a', win('a', '1').xml, 'alice');
    raw.pragma('user_version = 3');
    raw.close();
    const storage = open(file);
    expect(await new SqlPropertyRepository(storage.sql).list('n1')).toEqual([win('a', '1')]);
    const uploads = new SqlUploadSessionRepository(storage.sql);
    const session = { key: 'k1', owner: 'u1', name: 'up', protocol: 'nextcloud-v1' as const, destination: undefined, totalBytes: undefined, scope: 'u1', reservedBytes: 0, createdMs: 1, expiresMs: 10 };
    expect(await uploads.create(session)).toBe(true);
    expect(await uploads.find('u1', 'up', 2)).toEqual({ ...session, claimedUntilMs: undefined });
    const version = new Database(file, { readonly: true });
    expect(version.pragma('user_version', { simple: true })).toBe(STATE_FILE_VERSION);
    version.close();
  });

  it('moves a state file into shared storage once: rows already there are kept, the file is renamed', async () => {
    const file = stateFile();
    legacyFile(file, 2);
    const target = open(path.join(path.dirname(file), 'shared.sqlite'));
    const shared = new SqlPropertyRepository(target.sql);
    await shared.set('n2', win('b', 'already there'));
    expect(await moveStateFileInto(file, target.sql)).toEqual({ properties: 1, mtimes: 1 });
    expect(await shared.list('n1')).toEqual([win('a', '1')]);
    expect(await shared.list('n2')).toEqual([win('b', 'already there')]);
    expect(await shared.getMtime('n1')).toBe(1_577_836_800_000);
    expect(await shared.ownerBytes('alice')).toBe(weight(win('a', '1')));
    expect(await moveStateFileInto(file, target.sql)).toBeUndefined();
    const moved = new Database(`${file}.moved`, { readonly: true });
    expect((moved.prepare('SELECT count(*) AS n FROM dav_properties').get() as { n: number }).n).toBe(2);
    moved.close();
  });
});
