/**
 * App password rows (table `app_passwords`). Only the SHA-256 of a password is stored; this
 * module never sees the password itself (ops/app-passwords.ts makes and hashes it). Callers run
 * multi-row writes inside their own `sql.transaction`.
 */
import type { Sql } from './sql.js';

export interface AppPasswordRow {
  uuid: string;
  user_uuid: string;
  name: string;
  secret_hash: string;
  created: number;
  last_used: number | null;
}

export async function insertAppPassword(sql: Sql, row: Omit<AppPasswordRow, 'last_used'>): Promise<void> {
  (await sql.run('INSERT INTO app_passwords (uuid, user_uuid, name, secret_hash, created) VALUES (?, ?, ?, ?, ?)', [row.uuid,
    row.user_uuid,
    row.name,
    row.secret_hash,
    row.created]));
}

/** A user's app passwords, newest first. */
export async function listAppPasswords(sql: Sql, userUuid: string): Promise<AppPasswordRow[]> {
  return (await sql.all(
    // Newest first; of two made in the same millisecond, SQLite knows which came last (rowid),
    // PostgreSQL has no insertion order to ask for, so there the uuid decides.
    `SELECT * FROM app_passwords WHERE user_uuid = ? ORDER BY created DESC, ${sql.dialect === 'sqlite' ? 'rowid' : 'uuid'} DESC`,
    [userUuid],
  )) as AppPasswordRow[];
}

export async function countAppPasswords(sql: Sql, userUuid: string): Promise<number> {
  return ((await sql.get('SELECT COUNT(*) AS n FROM app_passwords WHERE user_uuid = ?', [userUuid])) as { n: number }).n;
}

export async function appPasswordOf(sql: Sql, userUuid: string, uuid: string): Promise<AppPasswordRow | undefined> {
  return (await sql.get('SELECT * FROM app_passwords WHERE user_uuid = ? AND uuid = ?', [userUuid, uuid])) as AppPasswordRow | undefined;
}

export async function appPasswordByHash(sql: Sql, userUuid: string, secretHash: string): Promise<AppPasswordRow | undefined> {
  return (await sql.get('SELECT * FROM app_passwords WHERE user_uuid = ? AND secret_hash = ?', [userUuid, secretHash])) as AppPasswordRow | undefined;
}

export async function touchAppPassword(sql: Sql, uuid: string, nowMs: number): Promise<void> {
  (await sql.run('UPDATE app_passwords SET last_used = ? WHERE uuid = ?', [nowMs, uuid]));
}

export async function deleteAppPassword(sql: Sql, uuid: string): Promise<void> {
  (await sql.run('DELETE FROM app_passwords WHERE uuid = ?', [uuid]));
}

export async function deleteUserAppPasswords(sql: Sql, userUuid: string): Promise<void> {
  (await sql.run('DELETE FROM app_passwords WHERE user_uuid = ?', [userUuid]));
}
