/**
 * Pending incoming shares (docs/api.md "Current user" and "Groups for members": GET/PUT
 * .../pending_incoming; docs/store-semantics.md "Sharing"). A user answers their own; a group's
 * are listed to its members and answered by whom `accept_incoming` names (`members`, or `admins`:
 * group administrators and the built-in admin). Accepting puts the copy in the recipient's
 * `incoming` within its quota (507, nothing changed); rejecting discards it. One transaction
 * per answer; blob files that lost their last reference are unlinked after it.
 */
import type { StoreContext } from '../context.js';
import { resolveGroup } from '../access.js';
import { getIncomingShare, pendingFor, rejectIncoming, type IncomingShareRow } from '../storage/shares.js';
import { isUuid } from '../storage/nodes.js';
import { acceptIncoming } from './share-copy.js';
import { conflict, forbidden, notFound } from '../envelope.js';
import { answerIncomingSchema, type IncomingAnswerRecord, type PendingIncomingRecord } from '../schemas/shares.js';
import type { AuthenticatedUser } from '../sessions.js';
import { removeBlobFiles } from './blob-files.js';
import { parseInput } from './input.js';

function record(row: IncomingShareRow): PendingIncomingRecord {
  return {
    uuid: row.uuid,
    name: row.name,
    type: row.type,
    size: row.size,
    sharer_uuid: row.sharer_uuid,
    sharer_fullname: row.sharer_fullname,
    shared_at: row.shared_at,
    source_uuid: row.source_uuid,
  };
}

export async function listUserIncoming(ctx: StoreContext, caller: AuthenticatedUser): Promise<PendingIncomingRecord[]> {
  return (await pendingFor(ctx.storage.sql, caller.userUuid)).map(record);
}

/** Members of the group read its list. */
export async function listGroupIncoming(ctx: StoreContext, caller: AuthenticatedUser, groupUuid: string): Promise<PendingIncomingRecord[]> {
  const { group } = await resolveGroup(ctx.storage.sql, caller, groupUuid, 'member');
  return (await pendingFor(ctx.storage.sql, group.uuid)).map(record);
}

/**
 * Accepts or rejects the share `body.uuid` awaiting `recipientUuid`: 404 when it is unknown or
 * awaits someone else, 409 `share_answered` when it was answered already.
 */
async function answer(ctx: StoreContext, caller: AuthenticatedUser, recipientUuid: string, body: unknown): Promise<IncomingAnswerRecord> {
  const input = parseInput(answerIncomingSchema, body);
  const { storage: { sql }, clock } = ctx;
  const now = clock.now();
  let unreferenced: string[] = [];
  const result = await sql.transaction(async (tx): Promise<IncomingAnswerRecord> => {
    const share = isUuid(input.uuid) ? (await getIncomingShare(tx, input.uuid.toLowerCase())) : undefined;
    if (!share || share.recipient_uuid !== recipientUuid) throw notFound('uuid: no such incoming share');
    if (share.state !== 'pending') throw conflict(`uuid: the share was ${share.state} already`, 'share_answered');
    if (input.action === 'reject') {
      unreferenced = await rejectIncoming(tx, share, caller.userUuid, now);
      return { uuid: share.uuid, state: 'rejected' };
    }
    const nodeUuid = await acceptIncoming({ sql: tx, now, callerUuid: caller.userUuid }, share, caller.userUuid);
    return { uuid: share.uuid, state: 'accepted', node_uuid: nodeUuid };
  });
  await removeBlobFiles(ctx, unreferenced);
  return result;
}

export function answerUserIncoming(ctx: StoreContext, caller: AuthenticatedUser, body: unknown): Promise<IncomingAnswerRecord> {
  return answer(ctx, caller, caller.userUuid, body);
}

/** 404 for non-members; 403 for members while `accept_incoming` is `admins` and they do not administer the group. */
export async function answerGroupIncoming(ctx: StoreContext, caller: AuthenticatedUser, groupUuid: string, body: unknown): Promise<IncomingAnswerRecord> {
  const { group, isGroupAdmin } = await resolveGroup(ctx.storage.sql, caller, groupUuid, 'member');
  if (group.accept_incoming === 'admins' && !isGroupAdmin) {
    throw forbidden("only the group's administrators answer its incoming shares (accept_incoming is admins)");
  }
  return answer(ctx, caller, group.uuid, body);
}
