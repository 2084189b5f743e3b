/**
 * openDatabase on a real file: one compiled statement per SQL text, upload tokens in a TEMP
 * table (in memory, gone when the connection closes), and migrations applied once.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../../src/store/db/database.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

/** Every migration file's version, so each new migration is expected without editing this test. */
const MIGRATION_VERSIONS = readdirSync(new URL('../../../src/store/db/migrations', import.meta.url))
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
