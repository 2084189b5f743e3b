/**
 * App password rows (table `app_passwords`). Only the SHA-256 of a password is stored; this
 * module never sees the password itself (ops/app-passwords.ts makes and hashes it). Callers run
 * multi-row writes inside their own `db.transaction`.
 */
import type { Db } from './dialects/sqlite-open.js';

export interface AppPasswordRow {
  uuid: string;
  user_uuid: string;
  name: string;
  secret_hash: string;
  created: number;
  last_used: number | null;
}

export function insertAppPassword(db: Db, row: Omit<AppPasswordRow, 'last_used'>): void {
  db.prepare('INSERT INTO app_passwords (uuid, user_uuid, name, secret_hash, created) VALUES (?, ?, ?, ?, ?)').run(
    row.uuid,
    row.user_uuid,
    row.name,
    row.secret_hash,
    row.created,
  );
}

/** A user's app passwords, newest first. */
export function listAppPasswords(db: Db, userUuid: string): AppPasswordRow[] {
  return db.prepare('SELECT * FROM app_passwords WHERE user_uuid = ? ORDER BY created DESC, rowid DESC').all(userUuid) as AppPasswordRow[];
}

export function countAppPasswords(db: Db, userUuid: string): number {
  return (db.prepare('SELECT COUNT(*) AS n FROM app_passwords WHERE user_uuid = ?').get(userUuid) as { n: number }).n;
}

export function appPasswordOf(db: Db, userUuid: string, uuid: string): AppPasswordRow | undefined {
  return db.prepare('SELECT * FROM app_passwords WHERE user_uuid = ? AND uuid = ?').get(userUuid, uuid) as AppPasswordRow | undefined;
}

export function appPasswordByHash(db: Db, userUuid: string, secretHash: string): AppPasswordRow | undefined {
  return db.prepare('SELECT * FROM app_passwords WHERE user_uuid = ? AND secret_hash = ?').get(userUuid, secretHash) as AppPasswordRow | undefined;
}

export function touchAppPassword(db: Db, uuid: string, nowMs: number): void {
  db.prepare('UPDATE app_passwords SET last_used = ? WHERE uuid = ?').run(nowMs, uuid);
}

export function deleteAppPassword(db: Db, uuid: string): void {
  db.prepare('DELETE FROM app_passwords WHERE uuid = ?').run(uuid);
}

export function deleteUserAppPasswords(db: Db, userUuid: string): void {
  db.prepare('DELETE FROM app_passwords WHERE user_uuid = ?').run(userUuid);
}
