/**
 * share_copy_with (docs/api.md "Nodes"; docs/store-semantics.md "Sharing"): each recipient, a user or a
 * group of the sharer's organization, is offered a copy of the node as it is now (a snapshot:
 * shared blobs, no new bytes) as a pending incoming share. In edition 1.0, which has no pending
 * lists, the copy goes straight into the recipient's `incoming`. When the node's workspace has a
 * `share_copy` approver, the snapshot waits in an approval request instead. One transaction.
 */
import type { StoreContext } from '../context.js';
import { withSql } from '../context.js';
import { mapInOrder } from '../in-order.js';
import { resolveNodeAccess, type Holder } from '../access.js';
import type { Sql } from '../storage/sql.js';
import {
  getIncomingShare,
  markIncomingAccepted,
  offerSnapshot,
  setIncomingNode,
  type IncomingShareRow,
  cloneSnapshot,
  deleteSnapshotRows,
  entriesOf,
  getSnapshot,
  releaseSnapshot,
  takeSnapshot,
  type SnapshotRow,
} from '../storage/shares.js';
import { adjustUsage } from '../storage/revisions.js';
import { getTopLevel, insertTree, touch, type NodeRow } from '../storage/nodes.js';
import { propagateChange } from '../storage/tree-changes.js';
import { assertRoom, freeName, type TreeWrite } from './tree.js';
import { forbidden, quotaExceeded, StoreHttpError } from '../envelope.js';
import type { AuthenticatedUser } from '../sessions.js';
import { callerRow } from './caller.js';
import { noteCopyOffered } from './notification-inbox.js';
import { recipientRecord, resolveRecipients, type NamedRecipient } from './recipients.js';
import { assertShareable, mustAwaitApproval, openShareRequest } from './share-requests.js';

export interface Sharer {
  uuid: string;
  fullname: string;
}

/**
 * Offers `snapshot` to every recipient (one snapshot each, the first one this one), or in
 * edition 1.0 delivers it into each recipient's `incoming` at once (507 naming the recipient
 * without room). Without recipients the snapshot is released. Runs in the caller's transaction;
 * returns the blobs no row refers to any more.
 */
export async function offerToAll(ctx: StoreContext, snapshot: SnapshotRow, recipients: readonly NamedRecipient[], sharer: Sharer, nowMs: number): Promise<string[]> {
  const { sql } = ctx.storage;
  if (recipients.length === 0) return releaseSnapshot(sql, snapshot.uuid);
  const held = await mapInOrder(recipients, async (_, index) => (index === 0 ? snapshot : await cloneSnapshot(sql, snapshot.uuid, nowMs)));
  for (const [index, recipient] of recipients.entries()) {
    const uuid = await offerSnapshot(sql, held[index] as SnapshotRow, recipient, sharer, nowMs);
    await noteCopyOffered(sql, recipient, { uuid, name: (held[index] as SnapshotRow).name, sharerFullname: sharer.fullname }, nowMs);
    if (ctx.config.store.edition === '3.0') continue;
    try {
      await acceptIncoming({ sql, now: nowMs, callerUuid: sharer.uuid }, (await getIncomingShare(sql, uuid)) as IncomingShareRow, null);
    } catch (err) {
      if (err instanceof StoreHttpError && err.code === 'quota_exceeded') throw quotaExceeded(`share_copy_with: ${recipient.uuid} has no room for the copy`);
      throw err;
    }
  }
  return [];
}

/**
 * What sharing a copy of `nodeId` needs of `holder`, when it is requested and again when its
 * request is approved (ops/approvals.ts): `read` and `download` on it (access.ts: of their own
 * or through a private share), and a node that may be shared. 404 or 403 as resolveNode says,
 * 403 without `download`; answers the node.
 */
export async function admitCopySource(sql: Sql, holder: Holder, nodeId: string): Promise<NodeRow> {
  const { node, access } = await resolveNodeAccess(sql, holder, nodeId, 'read');
  if (!access.granted.includes('download')) throw forbidden('download permission required to share a copy');
  await assertShareable(sql, node);
  return node;
}

/**
 * Shares a copy of `nodeId` (admitCopySource says what the caller needs). Answers the
 * request's UUID when it awaits approval.
 */
export async function shareCopyWith(ctx: StoreContext, caller: AuthenticatedUser, nodeId: string, raw: readonly string[], comment: string): Promise<{ pendingUuid?: string }> {
  const { storage: { sql }, clock, config } = ctx;
  const now = clock.now();
  // Checked in the transaction that snapshots: what is copied is what the caller may read now.
  return await sql.transaction(async (tx) => {
    const txCtx = withSql(ctx, tx);
    const node = await admitCopySource(tx, caller, nodeId);
    const recipients = await resolveRecipients(txCtx, caller, raw, 'share_copy_with');
    const sharer = { uuid: caller.userUuid, fullname: (await callerRow(txCtx, caller)).fullname };
    const snapshot = await takeSnapshot(tx, node, now);
    if (!(await mustAwaitApproval(tx, config.store.edition, node, 'share_copy'))) {
      await offerToAll(txCtx, snapshot, recipients, sharer, now);
      return {};
    }
    const details = { recipients: recipients.map(recipientRecord), size: snapshot.bytes };
    const pendingUuid = await openShareRequest(tx, { type: 'share_copy', node, requesterUuid: caller.userUuid, comment, details, snapshotUuid: snapshot.uuid, nowMs: now });
    return { pendingUuid };
  });
}

/**
 * Creates the snapshot as new nodes in `folder` (its owner's), the root under a free name
 * (`name (2)` on a clash, as trash numbers), each file at revision 1. The snapshot's blob
 * references become the revisions' and the snapshot goes. The bytes join the owner's usage,
 * within its quota (507, nothing changed). Returns the new root's UUID.
 */
export async function materialiseSnapshot(w: TreeWrite, uuid: string, folder: NodeRow): Promise<string> {
  const { sql, now } = w;
  const head = await getSnapshot(sql, uuid);
  if (!head) throw new Error(`no snapshot ${uuid}`);
  await assertRoom(sql, folder, head.bytes);
  const rootUuid = await insertTree(sql, await entriesOf(sql, uuid), folder, await freeName(sql, folder.uuid, head.name, head.type), { now, uploaderUuid: w.callerUuid });
  await adjustUsage(sql, folder.owner_type, folder.owner_uuid, head.bytes);
  await touch(sql, folder.uuid, now);
  await propagateChange(sql, folder.uuid, head.bytes);
  await deleteSnapshotRows(sql, uuid);
  return rootUuid;
}

/**
 * Accepts a pending share: its copy appears in the recipient's `incoming` (numbered on a name
 * clash), within the recipient's quota (507, nothing changed). Returns the copy's UUID.
 */
export async function acceptIncoming(w: TreeWrite, share: IncomingShareRow, answeredBy: string | null): Promise<string> {
  const { sql, now } = w;
  const incoming = await getTopLevel(sql, share.recipient_uuid, 'incoming');
  if (!incoming || share.snapshot_uuid === null) throw new Error(`incoming share ${share.uuid} cannot be accepted`);
  const snapshotUuid = share.snapshot_uuid;
  await markIncomingAccepted(sql, share.uuid, now, answeredBy);
  const nodeUuid = await materialiseSnapshot(w, snapshotUuid, incoming);
  await setIncomingNode(sql, share.uuid, nodeUuid);
  return nodeUuid;
}
