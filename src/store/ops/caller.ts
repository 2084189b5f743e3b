/** The caller's own user row, for the current-user operations. */
import type { StoreContext } from '../context.js';
import { getUserByUuid, type UserRow } from '../storage/users.js';
import { unauthenticated } from '../envelope.js';
import type { AuthenticatedUser } from '../sessions.js';

/** The session was joined to an active user a moment ago; a row gone since is a logout (401). */
export function callerRow(ctx: StoreContext, caller: AuthenticatedUser): UserRow {
  const user = getUserByUuid(ctx.db, caller.userUuid);
  if (!user) throw unauthenticated();
  return user;
}
