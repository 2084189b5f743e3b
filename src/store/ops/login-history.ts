/**
 * The current user's login history (docs/api.md "Login history entry": GET /api/user/login_history):
 * every login attempt and logout, newest first, at most `store.loginHistoryPerUser` of them
 * (storage/users.ts prunes on insert). `error_details` is present only on failures.
 */
import type { StoreContext } from '../context.js';
import { listLoginEvents, type LoginAction, type LoginStatus } from '../storage/users.js';
import type { AuthenticatedUser } from '../sessions.js';

export interface LoginHistoryEntry {
  action: LoginAction;
  action_args: string;
  error_details?: string;
  ip_address: string;
  status: LoginStatus;
  timestamp: number;
}

export async function getLoginHistory(ctx: StoreContext, caller: AuthenticatedUser): Promise<LoginHistoryEntry[]> {
  return (await listLoginEvents(ctx.storage.sql, caller.userUuid)).map((row) => {
    const entry: LoginHistoryEntry = { action: row.action, action_args: row.action_args, ip_address: row.ip_address, status: row.status, timestamp: row.timestamp };
    if (row.error_details !== '') entry.error_details = row.error_details;
    return entry;
  });
}
