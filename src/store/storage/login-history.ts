/**
 * The login history (table `login_events`): one row per login attempt and logout, newest first
 * by id. Each owner keeps at most `keep` rows: an insert drops that owner's oldest beyond the
 * bound, in the same transaction. Failures for unknown usernames have no owner and share one
 * bound, so a spraying attacker cannot grow the file. Never pass a password, token or key in
 * any field.
 */
import type { Sql } from './sql.js';

export type LoginAction = 'login' | 'logout';
export type LoginStatus = 'success' | 'failure';

export interface LoginEvent {
  /** Undefined when the username named nobody. */
  userUuid?: string;
  action: LoginAction;
  actionArgs?: string;
  errorDetails?: string;
  ip: string;
  status: LoginStatus;
  timestampMs: number;
}

export interface LoginEventRow {
  action: LoginAction;
  action_args: string;
  error_details: string;
  ip_address: string;
  status: LoginStatus;
  timestamp: number;
}

/** Appends one event and prunes its owner's history to the newest `keep` rows. */
export async function recordLoginEvent(sql: Sql, event: LoginEvent, keep: number): Promise<void> {
  const owner = event.userUuid ?? null;
  (await sql.transaction(async (tx) => {
    (await tx.run(`INSERT INTO login_events (user_uuid, action, action_args, error_details, ip_address, status, timestamp)
       VALUES (?, ?, ?, ?, ?, ?, ?)`, [owner, event.action, event.actionArgs ?? '', event.errorDetails ?? '', event.ip, event.status, event.timestampMs]));
    // `= ?` for an owner, `IS NULL` for the events of no user: both use the index in both dialects.
    const ofOwner = owner === null ? 'user_uuid IS NULL' : 'user_uuid = ?';
    const bound = owner === null ? [keep] : [owner, owner, keep];
    await tx.run(
      `DELETE FROM login_events WHERE ${ofOwner}
         AND id <= (SELECT id FROM login_events WHERE ${ofOwner} ORDER BY id DESC LIMIT 1 OFFSET ?)`,
      bound,
    );
  }));
}

/** A user's history, newest first. */
export async function listLoginEvents(sql: Sql, userUuid: string): Promise<LoginEventRow[]> {
  return (await sql.all('SELECT action, action_args, error_details, ip_address, status, timestamp FROM login_events WHERE user_uuid = ? ORDER BY id DESC', [userUuid])) as LoginEventRow[];
}
