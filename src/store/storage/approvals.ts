/**
 * Approvers and share approval requests (SPEC "Share approval", migration 009). The SQL only:
 * who may add approvers, decide or withdraw is ops/approvals.ts's to check. Multi-row writes run
 * inside the caller's transaction.
 */
import type { Sql } from './sql.js';
import { folded } from './portable.js';
import type { OwnerType } from './nodes.js';

/** Forgets every approver of a workspace (a deleted user or group). */
export async function dropApproversOf(sql: Sql, workspaceUuid: string): Promise<void> {
  await sql.run('DELETE FROM approvers WHERE workspace_uuid = ?', [workspaceUuid]);
}

export const SHARE_TYPES = ['public', 'private', 'upload', 'share_copy'] as const;
export type ShareType = (typeof SHARE_TYPES)[number];

export interface Workspace {
  type: OwnerType;
  uuid: string;
}

export interface ApproverRow {
  workspace_type: OwnerType;
  workspace_uuid: string;
  share_type: ShareType;
  approver_uuid: string;
  created: number;
  fullname: string;
  email: string;
}

export async function approversOf(sql: Sql, workspaceUuid: string): Promise<ApproverRow[]> {
  return (await sql.all(`SELECT a.*, u.fullname, u.email FROM approvers a JOIN users u ON u.uuid = a.approver_uuid
       WHERE a.workspace_uuid = ? ORDER BY a.share_type, ${folded(sql, 'u.fullname')}, u.uuid`, [workspaceUuid])) as ApproverRow[];
}

/** Whether the workspace has any approver for `type` (a share of that type then waits for approval). */
export async function needsApproval(sql: Sql, workspaceUuid: string, type: ShareType): Promise<boolean> {
  return (await sql.get('SELECT 1 FROM approvers WHERE workspace_uuid = ? AND share_type = ? LIMIT 1', [workspaceUuid, type])) !== undefined;
}

export async function isApprover(sql: Sql, workspaceUuid: string, type: ShareType, userUuid: string): Promise<boolean> {
  return (
    (await sql.get('SELECT 1 FROM approvers WHERE workspace_uuid = ? AND share_type = ? AND approver_uuid = ?', [workspaceUuid, type, userUuid])) !==
    undefined
  );
}

/** Adds the approver; false when it is one already. */
export async function insertApprover(sql: Sql, workspace: Workspace, type: ShareType, approverUuid: string, nowMs: number): Promise<boolean> {
  return (
    (await sql.run('INSERT INTO approvers (workspace_type, workspace_uuid, share_type, approver_uuid, created) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING', [workspace.type, workspace.uuid, type, approverUuid, nowMs])).changes > 0
  );
}

export async function deleteApprover(sql: Sql, workspaceUuid: string, type: ShareType, approverUuid: string): Promise<boolean> {
  return (await sql.run('DELETE FROM approvers WHERE workspace_uuid = ? AND share_type = ? AND approver_uuid = ?', [workspaceUuid, type, approverUuid])).changes > 0;
}

export type RequestState = 'pending' | 'approved' | 'rejected' | 'withdrawn';

export interface ShareRequestRow {
  uuid: string;
  workspace_type: OwnerType;
  workspace_uuid: string;
  share_type: ShareType;
  requester_uuid: string | null;
  node_uuid: string | null;
  node_name: string;
  node_type: 'Dir' | 'File';
  details: string;
  snapshot_uuid: string | null;
  comment: string;
  state: RequestState;
  requested_at: number;
  decided_at: number | null;
  decided_by: string | null;
  decision_comment: string;
  result_uuid: string | null;
}

export type NewShareRequest = Pick<
  ShareRequestRow,
  'uuid' | 'workspace_type' | 'workspace_uuid' | 'share_type' | 'requester_uuid' | 'node_uuid' | 'node_name' | 'node_type' | 'details' | 'snapshot_uuid' | 'comment' | 'requested_at'
>;

export async function insertShareRequest(sql: Sql, r: NewShareRequest): Promise<void> {
  (await sql.run(`INSERT INTO share_requests (uuid, workspace_type, workspace_uuid, share_type, requester_uuid, node_uuid, node_name, node_type, details, snapshot_uuid, comment, requested_at)
     VALUES (@uuid, @workspace_type, @workspace_uuid, @share_type, @requester_uuid, @node_uuid, @node_name, @node_type, @details, @snapshot_uuid, @comment, @requested_at)`, r));
}

export async function getShareRequest(sql: Sql, uuid: string): Promise<ShareRequestRow | undefined> {
  return (await sql.get('SELECT * FROM share_requests WHERE uuid = ?', [uuid])) as ShareRequestRow | undefined;
}

/** Pending requests of every workspace and type `approverUuid` approves, oldest first. */
export async function pendingForApprover(sql: Sql, approverUuid: string): Promise<ShareRequestRow[]> {
  return (await sql.all(`SELECT r.* FROM share_requests r
       JOIN approvers a ON a.workspace_uuid = r.workspace_uuid AND a.share_type = r.share_type AND a.approver_uuid = ?
       WHERE r.state = 'pending' ORDER BY r.requested_at, r.uuid`, [approverUuid])) as ShareRequestRow[];
}

/** The requests `requesterUuid` made, newest first, except the withdrawn ones. */
export async function requestsOf(sql: Sql, requesterUuid: string): Promise<ShareRequestRow[]> {
  return (await sql.all(`SELECT * FROM share_requests WHERE requester_uuid = ? AND state <> 'withdrawn' ORDER BY requested_at DESC, uuid`, [requesterUuid])) as ShareRequestRow[];
}

/** Lets go of the request's snapshot (before it is handed on or released). */
export async function detachRequestSnapshot(sql: Sql, uuid: string): Promise<void> {
  (await sql.run('UPDATE share_requests SET snapshot_uuid = NULL WHERE uuid = ?', [uuid]));
}

/** Records a decision or a withdrawal; the request's snapshot (if any) is the caller's to hand on or release first. */
export async function closeShareRequest(
  sql: Sql,
  uuid: string,
  outcome: { state: Exclude<RequestState, 'pending'>; byUuid: string; comment: string; resultUuid: string | null; nowMs: number },
): Promise<void> {
  (await sql.run(`UPDATE share_requests SET state = ?, decided_at = ?, decided_by = ?, decision_comment = ?, result_uuid = ?, snapshot_uuid = NULL
     WHERE uuid = ? AND state = 'pending'`, [outcome.state, outcome.nowMs, outcome.byUuid, outcome.comment, outcome.resultUuid, uuid]));
}

/** Pending requests in a workspace or by a requester (a deleted owner's), with their snapshots. */
export async function requestsTouching(sql: Sql, ownerUuid: string): Promise<ShareRequestRow[]> {
  return (await sql.all('SELECT * FROM share_requests WHERE workspace_uuid = ? OR requester_uuid = ?', [ownerUuid, ownerUuid])) as ShareRequestRow[];
}

export async function deleteShareRequest(sql: Sql, uuid: string): Promise<void> {
  (await sql.run('DELETE FROM share_requests WHERE uuid = ?', [uuid]));
}
