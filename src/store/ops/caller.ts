/** The caller's own user row, for the current-user operations. */
import type { StoreContext } from '../context.js';
import { getUserByUuid, type UserRow } from '../storage/users.js';
import { unauthenticated } from '../envelope.js';
import type { AuthenticatedUser } from '../sessions.js';

/** The session was joined to an active user a moment ago; a row gone since is a logout (401). */
export async function callerRow(ctx: StoreContext, caller: AuthenticatedUser): Promise<UserRow> {
  const user = await getUserByUuid(ctx.storage.sql, caller.userUuid);
  if (!user) throw unauthenticated();
  return user;
}
