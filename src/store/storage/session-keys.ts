/**
 * The session signing keys' table, `jwt_keys` (migration 013): a ring shared by every instance
 * over the database. The rules (which key signs, when to rotate and retire) are sessions.ts's.
 */
import type { Sql } from './sql.js';

export interface SessionKeyRow {
  kid: string;
  secret: string;
  created: number;
}

/** Every key not retired, oldest first (the last one signs). */
export function liveSessionKeys(sql: Sql): Promise<SessionKeyRow[]> {
  return sql.all<SessionKeyRow>('SELECT kid, secret, created FROM jwt_keys WHERE retired IS NULL ORDER BY created, kid');
}

/** Adds a key; with `ifAbsent`, two instances adding the same kid at once keep one. */
export async function insertSessionKey(sql: Sql, key: SessionKeyRow, ifAbsent = false): Promise<void> {
  await sql.run(`INSERT INTO jwt_keys (kid, secret, created) VALUES (?, ?, ?)${ifAbsent ? ' ON CONFLICT (kid) DO NOTHING' : ''}`, [key.kid, key.secret, key.created]);
}

/** When the newest live key was made; undefined when none is live. */
export async function newestSessionKeyCreated(sql: Sql): Promise<number | undefined> {
  const row = await sql.get<{ created: number }>('SELECT created FROM jwt_keys WHERE retired IS NULL ORDER BY created DESC LIMIT 1');
  return row === undefined ? undefined : Number(row.created);
}

/** Retires, as of `now`, every live key a newer key replaced at or before `replacedBefore`; how many. */
export async function retireReplacedSessionKeys(sql: Sql, now: number, replacedBefore: number): Promise<number> {
  const { changes } = await sql.run(
    'UPDATE jwt_keys SET retired = ? WHERE retired IS NULL AND EXISTS (SELECT 1 FROM jwt_keys n WHERE n.created > jwt_keys.created AND n.created <= ?)',
    [now, replacedBefore],
  );
  return changes;
}
