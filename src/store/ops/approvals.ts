/**
 * Share approval (docs/api.md "Share approval", edition 3.0; docs/store-semantics.md "Sharing"):
 * administrators name approvers of a user's or a group's workspace per share type; a share of
 * that type of one of the workspace's nodes then becomes a pending request (ops/share-copy.ts,
 * ops/shares.ts). An approver of that workspace and type approves (the share is carried out as
 * requested, once what it needed holds still, the requester's rights included, checked by the
 * functions that checked them when asked: a share_copy delivers the copy taken when requested)
 * or rejects it (its copy is discarded, the comment kept); the requester withdraws it. Each
 * transition is one transaction; blob files that lost their last reference are unlinked after it.
 */
import type { StoreContext } from '../context.js';
import { withSql } from '../context.js';
import { flatMapInOrder, mapInOrder } from '../in-order.js';
import {
  approversOf,
  closeShareRequest,
  deleteApprover,
  detachRequestSnapshot,
  getShareRequest,
  insertApprover,
  isApprover,
  needsApproval,
  SHARE_TYPES,
  pendingForApprover,
  requestsOf,
  type ShareRequestRow,
  type Workspace,
  getSnapshot,
  releaseSnapshot,
} from '../storage/shares.js';
import { getNode, isUuid, orgOfOwner, ownerName, type NodeRow } from '../storage/nodes.js';
import type { Sql } from '../storage/sql.js';
import { getUserByUuid } from '../storage/users.js';
import { holderOf, resolveNode } from '../access.js';
import { conflict, forbidden, invalid, notFound, StoreHttpError } from '../envelope.js';
import { approverBodySchema, decisionBodySchema, shareTypeParam, type ApproverRecord, type PendingShareRecord } from '../schemas/shares.js';
import type { AuthenticatedUser } from '../sessions.js';
import { administeredGroup, administeredUser, requireAdmin } from './admin-scope.js';
import { removeBlobFiles } from './blob-files.js';
import { parseInput } from './input.js';
import { recipientInOrg, type NamedRecipient, type RecipientRecord } from './recipients.js';
import { admitCopySource, offerToAll } from './share-copy.js';
import { admitLinkSource, createLinkFromRequest } from './shares.js';
import { isInTrash } from './tree.js';
import { noteRequestDecided } from './notification-inbox.js';

/** Which administrator door a call came through. */
export type WorkspaceDoor = 'users' | 'groups';

async function workspaceOf(ctx: StoreContext, caller: AuthenticatedUser, door: WorkspaceDoor, rawUuid: string): Promise<Workspace & { orgId: string }> {
  requireAdmin(caller);
  if (door === 'users') {
    const user = await administeredUser(ctx, caller, rawUuid);
    return { type: 'User', uuid: user.uuid, orgId: user.org_id };
  }
  const group = await administeredGroup(ctx, caller, rawUuid);
  return { type: 'Group', uuid: group.uuid, orgId: group.org_id };
}

export async function listApprovers(ctx: StoreContext, caller: AuthenticatedUser, door: WorkspaceDoor, workspaceUuid: string): Promise<ApproverRecord[]> {
  const workspace = await workspaceOf(ctx, caller, door, workspaceUuid);
  return (await approversOf(ctx.storage.sql, workspace.uuid)).map((a) => ({
    approver_id: a.approver_uuid,
    share_type: a.share_type,
    fullname: a.fullname,
    email: a.email,
    added: a.created,
  }));
}

/**
 * Adds `approver_id` (a user of the workspace's organization, 404 otherwise; never the
 * workspace's own user, 400) for `share_type`; 409 `approver_exists` when it is one already.
 */
export async function addApprover(ctx: StoreContext, caller: AuthenticatedUser, door: WorkspaceDoor, workspaceUuid: string, body: unknown): Promise<ApproverRecord[]> {
  const input = parseInput(approverBodySchema, body);
  const workspace = await ctx.storage.sql.transaction(async (tx) => {
    const txCtx = withSql(ctx, tx);
    const workspace = await workspaceOf(txCtx, caller, door, workspaceUuid);
    const user = isUuid(input.approver_id) ? await getUserByUuid(tx, input.approver_id.toLowerCase()) : undefined;
    if (!user || user.org_id !== workspace.orgId) throw notFound("approver_id: no such user in the workspace's organization");
    if (user.uuid === workspace.uuid) throw invalid('approver_id: a user cannot approve the shares of their own workspace');
    if (!(await insertApprover(tx, workspace, input.share_type, user.uuid, ctx.clock.now()))) {
      throw conflict(`approver_id: already approves ${input.share_type} shares of this workspace`, 'approver_exists');
    }
    return workspace;
  });
  return listApprovers(ctx, caller, door, workspace.uuid);
}

/** Removes one approver of one type (404 when it is none). Pending requests stay pending. */
export async function removeApprover(
  ctx: StoreContext,
  caller: AuthenticatedUser,
  door: WorkspaceDoor,
  workspaceUuid: string,
  approverUuid: string,
  rawType: string,
): Promise<void> {
  await ctx.storage.sql.transaction(async (tx) => {
    const workspace = await workspaceOf(withSql(ctx, tx), caller, door, workspaceUuid);
    const type = parseInput(shareTypeParam, rawType);
    if (!isUuid(approverUuid) || !(await deleteApprover(tx, workspace.uuid, type, approverUuid.toLowerCase()))) throw notFound('approver not found');
  });
}

interface StoredDetails {
  recipients?: RecipientRecord[];
  size?: number;
  writable?: boolean;
  expires?: number;
  password_hash?: string;
}

/** `share_info` (docs/api.md "Pending share approval request"): what would be shared with whom (never a hash). */
function shareInfo(row: ShareRequestRow): Record<string, unknown> {
  const details = JSON.parse(row.details) as StoredDetails;
  const info: Record<string, unknown> = { node_uuid: row.node_uuid, node_name: row.node_name, node_type: row.node_type };
  switch (row.share_type) {
    case 'share_copy':
      return { ...info, size: details.size ?? 0, recipients: details.recipients ?? [] };
    case 'private':
      return { ...info, recipients: details.recipients ?? [], writable: details.writable === true };
    case 'upload':
      return { ...info, folder: row.node_name, password_protected: details.password_hash !== undefined, expires: details.expires ?? null };
    case 'public':
      return { ...info, password_protected: details.password_hash !== undefined, expires: details.expires ?? null };
  }
}

async function nameOf(ctx: StoreContext, type: 'User' | 'Group', uuid: string | null): Promise<string> {
  return uuid === null ? '' : (await ownerName(ctx.storage.sql, { type, uuid }));
}

async function pendingRecord(ctx: StoreContext, row: ShareRequestRow): Promise<PendingShareRecord> {
  return {
    pending_uuid: row.uuid,
    workspace_id: row.workspace_uuid,
    workspace_type: row.workspace_type,
    workspace_name: await nameOf(ctx, row.workspace_type, row.workspace_uuid),
    share_type: row.share_type,
    requested_at: row.requested_at,
    comment: row.comment,
    share_info: shareInfo(row),
    requester_uuid: row.requester_uuid,
    requester_fullname: await nameOf(ctx, 'User', row.requester_uuid),
    state: row.state,
    decided_at: row.decided_at,
    approval_comment: row.decision_comment,
  };
}

/**
 * GET /api/nodes/{id}/approvals: which share types of a node the caller sees wait for an
 * approver (its workspace has one for that type), so a form asks for a note to the approver
 * only where one will read it. Names no approver. 404 for a node the caller does not see.
 */
export async function approvalsOf(ctx: StoreContext, caller: AuthenticatedUser, nodeId: string): Promise<{ needs_approval: string[] }> {
  const node = await resolveNode(ctx.storage.sql, caller, nodeId, 'visible');
  const needed = await mapInOrder([...SHARE_TYPES], async (type) => ((await needsApproval(ctx.storage.sql, node.owner_uuid, type)) ? [type] : []));
  return { needs_approval: needed.flat() };
}

/** GET /api/pending_shares: the pending requests the caller approves. */
export async function listPendingShares(ctx: StoreContext, caller: AuthenticatedUser): Promise<PendingShareRecord[]> {
  return mapInOrder(await pendingForApprover(ctx.storage.sql, caller.userUuid), (row) => pendingRecord(ctx, row));
}

/** GET /api/my_pending_shares: the caller's requests, pending and decided (withdrawn ones leave the list). */
export async function listMyPendingShares(ctx: StoreContext, caller: AuthenticatedUser): Promise<PendingShareRecord[]> {
  return mapInOrder(await requestsOf(ctx.storage.sql, caller.userUuid), (row) => pendingRecord(ctx, row));
}

const requestNotFound = () => notFound('pending share not found');

function assertPending(row: ShareRequestRow): void {
  if (row.state !== 'pending') throw conflict(`the request was ${row.state} already`, 'request_decided');
}

const requesterLacks = (why: string) =>
  conflict(`the requester may no longer make this share: ${why}; reject the request, or approve it once they may again`, 'requester_lacks_permission');

/**
 * The requester still holds what the request needed when it was made, checked now by the same
 * function that checked it then (admitCopySource, admitLinkSource): an account that is active,
 * and on the node `read` and `download` for a copy; for a link the share permission that creates
 * its type and what the link gives, of their own. Else 409 `requester_lacks_permission`.
 */
async function assertRequesterMay(sql: Sql, row: ShareRequestRow, node: NodeRow, details: StoredDetails): Promise<void> {
  const requester = await holderOf(sql, row.requester_uuid);
  if (!requester) throw requesterLacks('their account was deleted or deactivated');
  try {
    if (row.share_type === 'share_copy') await admitCopySource(sql, requester, node.uuid);
    else await admitLinkSource(sql, requester, node.uuid, row.share_type, details.writable === true);
  } catch (err) {
    if (!(err instanceof StoreHttpError) || (err.statusCode !== 403 && err.statusCode !== 404)) throw err;
    throw requesterLacks(err.statusCode === 404 ? 'they no longer see the node' : err.message);
  }
}

/**
 * What approving needs, checked again now (the request may have waited for days): its node
 * still there (409 `node_gone`) and out of trash (409 `node_in_trash`), the expiry a link asks
 * for still ahead (409 `request_expired`), the requester still entitled to make the share (409
 * `requester_lacks_permission`). A refusal leaves the request pending. Answers the node.
 */
async function admitApproval(sql: Sql, row: ShareRequestRow, nowMs: number): Promise<NodeRow> {
  const node = row.node_uuid === null ? undefined : (await getNode(sql, row.node_uuid));
  if (!node) throw conflict('the node of this request was deleted; reject the request', 'node_gone');
  if (await isInTrash(sql, node)) throw conflict('the node of this request lies in trash; restore it first or reject the request', 'node_in_trash');
  const details = JSON.parse(row.details) as StoredDetails;
  // A link whose expiry passed while it waited would be born dead, or live on a stale promise.
  if (details.expires !== undefined && nowMs >= details.expires) {
    throw conflict(`the link this request asks for expired at ${new Date(details.expires).toISOString()}; reject the request (the requester may ask again)`, 'request_expired');
  }
  await assertRequesterMay(sql, row, node, details);
  return node;
}

/**
 * Carries out an approved request (its snapshot detached from it already) once admitApproval
 * let it; answers the share a link request made, and the blobs no row refers to any more.
 */
async function carryOut(ctx: StoreContext, row: ShareRequestRow, nowMs: number): Promise<{ resultUuid: string | null; unreferenced: string[] }> {
  const node = await admitApproval(ctx.storage.sql, row, nowMs);
  if (row.share_type !== 'share_copy') return { resultUuid: await createLinkFromRequest(ctx, row, node, nowMs), unreferenced: [] };
  const snapshot = row.snapshot_uuid === null ? undefined : (await getSnapshot(ctx.storage.sql, row.snapshot_uuid));
  if (!snapshot) throw new Error(`share_copy request ${row.uuid} holds no snapshot`);
  const orgId = await orgOfOwner(ctx.storage.sql, { type: row.workspace_type, uuid: row.workspace_uuid });
  // Recipients deleted since the request are left out.
  const recipients = await flatMapInOrder((JSON.parse(row.details) as StoredDetails).recipients ?? [], async (r): Promise<NamedRecipient[]> => {
    const current = await recipientInOrg(ctx, orgId, r.uuid);
    return current ? [current] : [];
  });
  const sharer = { uuid: row.requester_uuid ?? '', fullname: await nameOf(ctx, 'User', row.requester_uuid) };
  return { resultUuid: null, unreferenced: await offerToAll(ctx, snapshot, recipients, sharer, nowMs) };
}

/**
 * PUT /api/pending_shares/{uuid}/approval. 404 unless the caller approves that workspace and
 * type (no existence leak), 409 `request_decided` once it is no longer pending, 403 for the
 * requester deciding their own request. `approved` carries the share out; `rejected` discards it.
 */
export async function decideShare(ctx: StoreContext, caller: AuthenticatedUser, pendingUuid: string, body: unknown): Promise<PendingShareRecord> {
  const input = parseInput(decisionBodySchema, body);
  const { storage: { sql }, clock } = ctx;
  const now = clock.now();
  let unreferenced: string[] = [];
  await sql.transaction(async (tx) => {
    const txCtx = withSql(ctx, tx);
    const row = isUuid(pendingUuid) ? (await getShareRequest(tx, pendingUuid.toLowerCase())) : undefined;
    if (!row || !(await isApprover(tx, row.workspace_uuid, row.share_type, caller.userUuid))) throw requestNotFound();
    assertPending(row);
    if (row.requester_uuid === caller.userUuid) throw forbidden('the requester cannot decide their own request');
    // The request lets go of its copy: approving hands it to the recipients, rejecting discards it.
    await detachRequestSnapshot(tx, row.uuid);
    let resultUuid: string | null = null;
    if (input.status === 'approved') ({ resultUuid, unreferenced } = await carryOut(txCtx, row, now));
    else if (row.snapshot_uuid !== null) unreferenced = await releaseSnapshot(tx, row.snapshot_uuid);
    await closeShareRequest(tx, row.uuid, { state: input.status, byUuid: caller.userUuid, comment: input.comment ?? '', resultUuid, nowMs: now });
    await noteRequestDecided(tx, row, { state: input.status, byFullname: await nameOf(txCtx, 'User', caller.userUuid), comment: input.comment ?? '' }, now);
  });
  await removeBlobFiles(ctx, unreferenced);
  return pendingRecord(ctx, (await getShareRequest(sql, pendingUuid.toLowerCase())) as ShareRequestRow);
}

/** DELETE /api/my_pending_shares/{uuid}: 404 unless the caller made it, 409 `request_decided` once decided. */
export async function withdrawShare(ctx: StoreContext, caller: AuthenticatedUser, pendingUuid: string): Promise<PendingShareRecord> {
  const { storage: { sql }, clock } = ctx;
  let unreferenced: string[] = [];
  await sql.transaction(async (tx) => {
    const row = isUuid(pendingUuid) ? (await getShareRequest(tx, pendingUuid.toLowerCase())) : undefined;
    if (!row || row.requester_uuid !== caller.userUuid) throw requestNotFound();
    assertPending(row);
    await closeShareRequest(tx, row.uuid, { state: 'withdrawn', byUuid: caller.userUuid, comment: '', resultUuid: null, nowMs: clock.now() });
    if (row.snapshot_uuid !== null) unreferenced = await releaseSnapshot(tx, row.snapshot_uuid);
  });
  await removeBlobFiles(ctx, unreferenced);
  return pendingRecord(ctx, (await getShareRequest(sql, pendingUuid.toLowerCase())) as ShareRequestRow);
}
