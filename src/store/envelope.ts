/**
 * Success and error envelopes (docs/api.md "Envelope"): `{status, msg, data?}`. Routes throw
 * StoreHttpError; the one error handler in app.ts turns it (and anything else) into
 * `{status:"error", msg, code}`, hiding the text of any 5xx. `code` is a documented extension
 * (docs/store-semantics.md): stable, machine-readable, never renamed.
 */

import { RETRY_AFTER_SEC } from '../common/readiness.js';
import { StorageUnavailableError } from '../contracts/storage-unavailable.js';
import { BlobUnavailableError } from './blobs/blob-backend.js';

export type ErrorCode =
  | 'invalid_request'      // 400: body/query/path fails validation
  | 'invalid_name'         // 400: node name rule broken
  | 'checksum_mismatch'    // 400: an upload's bytes contradict its OC-Checksum
  | 'invalid_password'     // 400: password rule broken
  | 'unauthenticated'      // 401: no, malformed, expired or revoked token / bad credentials
  | 'twofa_required'       // 401: right password, 2FA on, no `code` in the login body
  | 'twofa_invalid'        // 401: right password, wrong or already used `code` (400 when confirming a set-up)
  | 'forbidden'            // 403: caller may see the node but not do this
  | 'top_level_immutable'  // 403: rename/move/delete of a top-level folder
  | 'virtual_folder'       // 403: writing into favorites / shares listings
  | 'password_expired'     // 403: the session's password is past store.passwordMaxAgeDays; set a new one
  | 'reauth_required'      // 403: a change that asks for the password (or a code) again, none sent, session older than the grace
  | 'reauth_invalid'       // 403: the `password` or `code` sent to confirm such a change is wrong
  | 'not_found'            // 404: unknown node, or one the caller may not see
  | 'not_a_folder'         // 409: folder operation on a file (or the reverse)
  | 'name_conflict'        // 409: the name exists in the target folder
  | 'move_into_self'       // 409: folder moved/copied into itself or a descendant
  | 'email_taken'          // 409: email not unique
  | 'endpoint_taken'       // 409: WebDrive endpoint held by another user or group
  | 'twofa_enabled'        // 409: enabling 2FA that is already on
  | 'twofa_not_set_up'     // 409: confirming a 2FA set-up that was never started or has expired
  | 'twofa_disabled'       // 409: making recovery codes while 2FA is off
  | 'too_many_app_passwords' // 409: the user holds the maximum number of app passwords
  | 'group_name_taken'     // 409: the organization has a group of that name
  | 'already_member'       // 409: the user is a member of the group already
  | 'tag_exists'           // 409: the group has a tag of that name
  | 'organization_exists'  // 409: an organization with that id exists
  | 'organization_in_use'  // 409: the organization still has users or groups, or users with disk_quota -1
  | 'email_not_configured' // 409: broadcast_message without mail.host
  | 'node_in_trash'        // 409: sharing a node that lies in trash (restore it first)
  | 'not_in_trash'         // 409: restoring a node that is not directly in a trash folder
  | 'request_expired'      // 409: approving a link request whose `expires` has passed
  | 'share_answered'       // 409: answering an incoming share that was accepted or rejected already
  | 'request_decided'      // 409: deciding or withdrawing a share request that is no longer pending
  | 'approver_exists'      // 409: the user approves that share type of the workspace already
  | 'node_gone'            // 409: approving a request whose node was deleted for good
  | 'requester_lacks_permission' // 409: approving a request whose requester may no longer make that share
  | 'not_a_link'           // 409: changing a link's password, expiry or mode on a private share
  | 'approval_required'    // 409: changing a link whose type waits for an approver on its workspace
  | 'link_expired'         // 410: a public or upload link past its `expires`
  | 'upload_token_expired' // 410: upload token older than its lifetime
  | 'upload_token_used'    // 410: upload token presented before, or unknown
  | 'range_not_satisfiable'// 416
  | 'precondition_failed'  // 412: If-Match / If-Unmodified-Since (and If-None-Match on writes) failed
  | 'rate_limited'         // 429: too many failed logins
  | 'email_failed'         // 502: the mail server refused or could not be reached
  | 'unavailable'          // 503 + Retry-After: the database or blob backend is unreachable, or the store is stopping
  | 'quota_exceeded'       // 507: the write would exceed disk_quota
  | 'not_implemented'      // 404 for endpoints outside the served edition
  | 'internal';            // 500

export class StoreHttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'StoreHttpError';
  }
}

export const invalid = (msg: string, code: ErrorCode = 'invalid_request') => new StoreHttpError(400, code, msg);
export const unauthenticated = (msg = 'authentication required') => new StoreHttpError(401, 'unauthenticated', msg);
export const forbidden = (msg: string, code: ErrorCode = 'forbidden') => new StoreHttpError(403, code, msg);
export const notFound = (msg = 'node not found') => new StoreHttpError(404, 'not_found', msg);
export const conflict = (msg: string, code: ErrorCode = 'name_conflict') => new StoreHttpError(409, code, msg);
export const quotaExceeded = (msg = 'disk quota exceeded') => new StoreHttpError(507, 'quota_exceeded', msg);

/** 503 with Retry-After; the message names no host, URL or driver text (those are logged). */
export const unavailable = (msg: string) => new StoreHttpError(503, 'unavailable', msg, { 'Retry-After': String(RETRY_AFTER_SEC) });

/**
 * The database or the blob backend could not be reached: the 503 the caller should retry, for
 * routes (app.ts) and the in-process client alike; undefined for any other failure.
 */
export function unavailableOf(err: unknown): StoreHttpError | undefined {
  if (err instanceof StorageUnavailableError) return unavailable('the database is unavailable; try again later');
  if (err instanceof BlobUnavailableError) return unavailable('the blob storage is unavailable; try again later');
  return undefined;
}

export interface SuccessEnvelope<T> {
  status: 'success';
  msg: string;
  data?: T;
}

export function success<T>(msg: string, data?: T): SuccessEnvelope<T> {
  return data === undefined ? { status: 'success', msg } : { status: 'success', msg, data };
}

export function errorEnvelope(msg: string, code: ErrorCode): { status: 'error'; msg: string; code: ErrorCode } {
  return { status: 'error', msg, code };
}
