/**
 * What every share has in common (docs/store-semantics.md "Sharing"): which nodes may be shared
 * at all, and opening a share approval request, which is what a share of any type becomes when
 * the workspace (the owner of the node being shared) has an approver for that type. Run inside
 * the caller's transaction; deciding and withdrawing are ops/approvals.ts's.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from '../storage/sql.js';
import { insertShareRequest, needsApproval, type ShareType } from '../storage/shares.js';
import type { NodeRow } from '../storage/nodes.js';
import { isInTrash } from './tree.js';
import { conflict, forbidden } from '../envelope.js';
import { noteApprovalWaiting } from './notification-inbox.js';

/** Top-level folders are never shared (403 `top_level_immutable`), nor nodes in trash (409 `node_in_trash`). */
export async function assertShareable(sql: Sql, node: NodeRow): Promise<void> {
  if (node.top_kind !== null) throw forbidden('a top-level folder cannot be shared', 'top_level_immutable');
  if (await isInTrash(sql, node)) throw conflict('a node in trash cannot be shared; restore it first', 'node_in_trash');
}

/** Whether a share of `type` of `node` must wait for an approver. Edition 1.0 has no approval. */
export async function mustAwaitApproval(sql: Sql, edition: string, node: NodeRow, type: ShareType): Promise<boolean> {
  return edition === '3.0' && (await needsApproval(sql, node.owner_uuid, type));
}

export interface RequestContent {
  type: ShareType;
  node: NodeRow;
  requesterUuid: string;
  comment: string;
  /** What would be shared (JSON): recipients, writable, expires, hashes of a link's secrets. */
  details: object;
  snapshotUuid?: string;
  nowMs: number;
}

/** Records a pending request; answers its UUID (the `pending_uuid`). */
export async function openShareRequest(sql: Sql, content: RequestContent): Promise<string> {
  const uuid = randomUUID();
  await insertShareRequest(sql, {
    uuid,
    workspace_type: content.node.owner_type,
    workspace_uuid: content.node.owner_uuid,
    share_type: content.type,
    requester_uuid: content.requesterUuid,
    node_uuid: content.node.uuid,
    node_name: content.node.name,
    node_type: content.node.type,
    details: JSON.stringify(content.details),
    snapshot_uuid: content.snapshotUuid ?? null,
    comment: content.comment,
    requested_at: content.nowMs,
  });
  await noteApprovalWaiting(sql, { uuid, workspaceUuid: content.node.owner_uuid, shareType: content.type, nodeName: content.node.name, requesterUuid: content.requesterUuid }, content.nowMs);
  return uuid;
}
