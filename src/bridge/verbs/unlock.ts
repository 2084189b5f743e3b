/**
 * UNLOCK (RFC 4918 §9.11): removes the lock named by the Lock-Token header, which Windows'
 * Mini-Redirector sometimes sends without angle brackets (docs/client-quirks.md §2). The request URI must
 * be a resource within the lock's scope, reached through any path (locks are keyed by node
 * UUIDs); only the user who took the lock may remove it (§6.4). Keeps no state itself.
 *
 * Statuses: 204 removed; 400 no or a malformed Lock-Token header; 409 with
 * DAV:lock-token-matches-request-uri for an unknown or expired token, an unmapped URL, or a
 * resource outside the lock's scope (§9.11.1); 403 for another user's lock.
 */
import { DavStatusError } from '../dav-errors.js';
import { parseLockTokenHeader } from '../if-header.js';
import { LockError } from '../locks.js';
import type { VerbHandler } from '../request/context.js';
import { sendEmpty } from '../request/respond.js';

export const unlock: VerbHandler = async (ctx) => {
  const user = ctx.user();
  const raw = ctx.req.headers['lock-token'];
  if (raw === undefined) throw new DavStatusError(400, 'UNLOCK needs a Lock-Token header');
  const token = Array.isArray(raw) ? undefined : parseLockTokenHeader(raw);
  if (token === undefined) throw new DavStatusError(400, 'malformed Lock-Token header');
  const resource = await ctx.services.tree.tryStat(user, ctx.path);
  if (!resource) throw new DavStatusError(409, 'the request URI names no resource', 'lock-token-matches-request-uri');
  try {
    await ctx.services.locks.unlock(token, resource.chain, user.userId);
  } catch (err) {
    if (err instanceof LockError && (err.kind === 'no-such-lock' || err.kind === 'not-in-scope')) {
      throw new DavStatusError(409, err.message, 'lock-token-matches-request-uri');
    }
    throw err;
  }
  sendEmpty(ctx, 204);
};
