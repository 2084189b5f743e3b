/**
 * Session rows (sessions.ts signs and verifies the tokens; this module only keeps the rows): a
 * session is live while it is neither revoked nor expired and its user is active.
 */
import type { Sql } from './sql.js';

export interface SessionInsert {
  sessionId: string;
  userUuid: string;
  fileaccesskey: string;
  createdMs: number;
  expiresMs: number;
  ip: string;
  appPasswordUuid: string | null;
}

export async function insertSessionRow(sql: Sql, row: SessionInsert): Promise<void> {
  await sql.run('INSERT INTO sessions (id, user_uuid, fileaccesskey, created, expires, ip, app_password_uuid) VALUES (?, ?, ?, ?, ?, ?, ?)', [
    row.sessionId,
    row.userUuid,
    row.fileaccesskey,
    row.createdMs,
    row.expiresMs,
    row.ip,
    row.appPasswordUuid,
  ]);
}

export interface ActiveSessionRow {
  user_uuid: string;
  id: string;
  is_admin: number;
  is_builtin: number;
  org_id: string;
  app_password_uuid: string | null;
  password_changed: number;
  /** When the session expires (ms). */
  expires: number;
}

const ACTIVE_SESSION_BY = (column: 'id' | 'fileaccesskey') => `SELECT s.id, s.user_uuid, s.app_password_uuid, u.is_admin, u.is_builtin, u.org_id, u.password_changed, s.expires
  FROM sessions s JOIN users u ON u.uuid = s.user_uuid
  WHERE s.${column} = ? AND s.revoked IS NULL AND s.expires > ? AND u.is_active = 1`;
const BY_ID = ACTIVE_SESSION_BY('id');
const BY_KEY = ACTIVE_SESSION_BY('fileaccesskey');

/** The live session with this id (or fileaccesskey) and its active user. */
export function activeSession(sql: Sql, by: 'id' | 'fileaccesskey', value: string, nowMs: number): Promise<ActiveSessionRow | undefined> {
  return sql.get<ActiveSessionRow>(by === 'id' ? BY_ID : BY_KEY, [value, nowMs]);
}

/** Revokes the live sessions a filter names: one session, a user's (all, or all but one), an app password's. */
export async function revokeSessions(
  sql: Sql,
  nowMs: number,
  which: { sessionId: string } | { userUuid: string; exceptSessionId?: string } | { appPasswordUuid: string },
): Promise<void> {
  if ('sessionId' in which) {
    await sql.run('UPDATE sessions SET revoked = ? WHERE id = ? AND revoked IS NULL', [nowMs, which.sessionId]);
  } else if ('appPasswordUuid' in which) {
    await sql.run('UPDATE sessions SET revoked = ? WHERE app_password_uuid = ? AND revoked IS NULL', [nowMs, which.appPasswordUuid]);
  } else if (which.exceptSessionId !== undefined) {
    await sql.run('UPDATE sessions SET revoked = ? WHERE user_uuid = ? AND id <> ? AND revoked IS NULL', [nowMs, which.userUuid, which.exceptSessionId]);
  } else {
    await sql.run('UPDATE sessions SET revoked = ? WHERE user_uuid = ? AND revoked IS NULL', [nowMs, which.userUuid]);
  }
}

/** How many sessions of the user are live (not revoked, not expired). */
export async function countLiveSessions(sql: Sql, userUuid: string, nowMs: number): Promise<number> {
  const row = await sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM sessions WHERE user_uuid = ? AND revoked IS NULL AND expires > ?', [userUuid, nowMs]);
  return Number(row?.n ?? 0);
}
