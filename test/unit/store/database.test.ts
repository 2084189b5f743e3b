/**
 * openDatabase on a real file: one compiled statement per SQL text, upload tokens in a TEMP
 * table (in memory, gone when the connection closes), migrations applied once, and the
 * remembered top-level kinds, which a move forgets even when its transaction rolls back.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import type { Sql } from '../../../src/store/storage/sql.js';
import { openDatabase, type Db } from '../../../src/store/storage/dialects/sqlite-open.js';
import { createTopLevelFolders, getNode, getTopLevel, topKindOf, type NodeRow } from '../../../src/store/storage/nodes.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

/** Every migration file's version, so each new migration is expected without editing this test. */
const MIGRATION_VERSIONS = readdirSync(new URL('../../../src/store/storage/migrations/sqlite', import.meta.url))
  .filter((name) => /^\d{3}-[\w-]+\.sql$/.test(name))
  .map((name) => Number(name.slice(0, 3)))
  .sort((a, b) => a - b);

let tmp: ReturnType<typeof makeTmpDir>;
let file: string;
let db: Db | undefined;

beforeEach(() => {
  tmp = makeTmpDir('driveway-db-');
  file = path.join(tmp.dir, 'driveway.sqlite');
});
afterEach(() => {
  db?.close();
  db = undefined;
  tmp.remove();
});

describe('openDatabase', () => {
  it('hands out the same compiled statement for the same SQL text', () => {
    db = openDatabase(file);
    const sql = 'SELECT COUNT(*) AS n FROM nodes WHERE parent_uuid = ?';
    expect(db.prepare(sql)).toBe(db.prepare(sql));
    expect(db.prepare(sql)).not.toBe(db.prepare('SELECT 1 AS one'));
    expect(db.prepare(sql).get('nothing')).toEqual({ n: 0 });
  });

  it('keeps upload tokens in a TEMP table that a reopened database no longer holds rows of', () => {
    db = openDatabase(file);
    expect(db.prepare("SELECT name FROM sqlite_temp_master WHERE type = 'table'").all()).toEqual([{ name: 'upload_tokens' }]);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'upload_tokens'").all()).toEqual([]);
    db.prepare('INSERT INTO upload_tokens (token_hash, user_uuid, session_id, target_uuid, created) VALUES (?, ?, ?, ?, ?)').run('h', 'u', 's', 't', 1);
    db.close();

    db = openDatabase(file);
    expect(db.prepare('SELECT COUNT(*) AS n FROM upload_tokens').get()).toEqual({ n: 0 });
    expect((db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as Array<{ version: number }>).map((r) => r.version)).toEqual(MIGRATION_VERSIONS);
  });
});

describe('topKindOf', () => {
  const owner = '00000000-0000-4000-8000-000000000001';

  async function folder(sql: Sql, parent: NodeRow, name: string): Promise<NodeRow> {
    const uuid = randomUUID();
    await sql.run(`INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, name, type, created, updated) VALUES (?, ?, 'User', ?, ?, 'Dir', 0, 0)`, [uuid, owner, parent.uuid, name]);
    return (await getNode(sql, uuid)) as NodeRow;
  }
  const moveTo = async (sql: Sql, node: NodeRow, parent: NodeRow): Promise<void> => {
    await sql.run('UPDATE nodes SET parent_uuid = ? WHERE uuid = ?', [parent.uuid, node.uuid]);
  };

  it('follows every move of the node or of a folder above it, committed or rolled back', async () => {
    db = openDatabase(file);
    const sql = new SqliteStorage(db).sql;
    await createTopLevelFolders(sql, 'User', owner, 0);
    const home = (await getTopLevel(sql, owner, 'home')) as NodeRow;
    const trash = (await getTopLevel(sql, owner, 'trash')) as NodeRow;
    const outer = await folder(sql, home, 'outer');
    const inner = await folder(sql, outer, 'inner');
    expect([await topKindOf(sql, home), await topKindOf(sql, outer), await topKindOf(sql, inner)]).toEqual(['home', 'home', 'home']);

    // An ancestor moves: the remembered answer for the node below it goes too.
    await moveTo(sql, outer, trash);
    expect(await topKindOf(sql, inner)).toBe('trash');
    await moveTo(sql, outer, home);
    expect(await topKindOf(sql, inner)).toBe('home');

    // A move inside a transaction that rolls back: inside, the new place; afterwards, the old.
    await expect(
      sql.transaction(async (tx) => {
        await moveTo(tx, outer, trash);
        expect(await topKindOf(tx, inner)).toBe('trash');
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await topKindOf(sql, inner)).toBe('home');
  });
});
