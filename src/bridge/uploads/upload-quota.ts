/**
 * Whose quota an upload's bytes count against and what that quota leaves, as the bridge knows it
 * (StoreTree.quota, the store's answer): what the front doors (nextcloud.ts, tus.ts) hand the
 * upload service's reservations, and the refusals those make, answered as each protocol answers
 * them. No rule of its own: the repository decides, in one transaction, whether a reservation fits.
 */
import { DavStatusError } from '../dav-errors.js';
import type { BridgeUser } from '../sessions.js';
import { quotaRoomAt } from '../commit.js';
import type { DavPath } from '../store-tree.js';
import type { DavContext } from '../request/context.js';
import type { UploadSession } from '../../contracts/upload-sessions.js';
import type { UploadLimitError, UploadQuota } from '../upload-service.js';

/**
 * The quota where `destination` lies (or its folder: the file may not exist yet): a group's in a
 * group's drive, else the user's, also when no destination is known yet (Nextcloud v1).
 * `availableBytes` is Infinity when the store sets no limit.
 */
export function uploadQuotaAt(ctx: DavContext, user: BridgeUser, destination: DavPath | undefined): Promise<UploadQuota> {
  return quotaRoomAt(ctx, user, destination);
}

/** The quota a session's reservations count against: its owner's, or the group's its destination lies in. */
export function sessionQuota(ctx: DavContext, user: BridgeUser, session: UploadSession, destination: DavPath | undefined): Promise<UploadQuota> {
  return uploadQuotaAt(ctx, user, session.scope === user.userId ? undefined : destination);
}

/**
 * An UploadLimitError as the DAV status both protocols answer: 507 for the quota (with RFC 4331's
 * precondition) and for too many parts (the upload can hold no more), 429 for too many open
 * uploads (one finishing or expiring makes room). `headers`: what every answer of the protocol carries.
 */
export function limitRefusal(err: UploadLimitError, headers: Record<string, string> = {}): DavStatusError {
  if (err.kind === 'open-uploads') return new DavStatusError(429, err.message, undefined, headers);
  return new DavStatusError(507, err.message, err.kind === 'quota' ? 'quota-not-exceeded' : undefined, headers);
}
