/**
 * Approvers and share approval requests (SPEC "Share approval", migration 009). The SQL only:
 * who may add approvers, decide or withdraw is ops/approvals.ts's to check. Multi-row writes run
 * inside the caller's transaction.
 */
import type { Db } from './dialects/sqlite-open.js';
import type { OwnerType } from './nodes.js';

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

export function approversOf(db: Db, workspaceUuid: string): ApproverRow[] {
  return db
    .prepare(
      `SELECT a.*, u.fullname, u.email FROM approvers a JOIN users u ON u.uuid = a.approver_uuid
       WHERE a.workspace_uuid = ? ORDER BY a.share_type, u.fullname COLLATE NOCASE, u.uuid`,
    )
    .all(workspaceUuid) as ApproverRow[];
}

/** Whether the workspace has any approver for `type` (a share of that type then waits for approval). */
export function needsApproval(db: Db, workspaceUuid: string, type: ShareType): boolean {
  return db.prepare('SELECT 1 FROM approvers WHERE workspace_uuid = ? AND share_type = ? LIMIT 1').get(workspaceUuid, type) !== undefined;
}

export function isApprover(db: Db, workspaceUuid: string, type: ShareType, userUuid: string): boolean {
  return (
    db.prepare('SELECT 1 FROM approvers WHERE workspace_uuid = ? AND share_type = ? AND approver_uuid = ?').get(workspaceUuid, type, userUuid) !==
    undefined
  );
}

/** Adds the approver; false when it is one already. */
export function insertApprover(db: Db, workspace: Workspace, type: ShareType, approverUuid: string, nowMs: number): boolean {
  return (
    db
      .prepare('INSERT OR IGNORE INTO approvers (workspace_type, workspace_uuid, share_type, approver_uuid, created) VALUES (?, ?, ?, ?, ?)')
      .run(workspace.type, workspace.uuid, type, approverUuid, nowMs).changes > 0
  );
}

export function deleteApprover(db: Db, workspaceUuid: string, type: ShareType, approverUuid: string): boolean {
  return db.prepare('DELETE FROM approvers WHERE workspace_uuid = ? AND share_type = ? AND approver_uuid = ?').run(workspaceUuid, type, approverUuid).changes > 0;
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

export function insertShareRequest(db: Db, r: NewShareRequest): void {
  db.prepare(
    `INSERT INTO share_requests (uuid, workspace_type, workspace_uuid, share_type, requester_uuid, node_uuid, node_name, node_type, details, snapshot_uuid, comment, requested_at)
     VALUES (@uuid, @workspace_type, @workspace_uuid, @share_type, @requester_uuid, @node_uuid, @node_name, @node_type, @details, @snapshot_uuid, @comment, @requested_at)`,
  ).run(r);
}

export function getShareRequest(db: Db, uuid: string): ShareRequestRow | undefined {
  return db.prepare('SELECT * FROM share_requests WHERE uuid = ?').get(uuid) as ShareRequestRow | undefined;
}

/** Pending requests of every workspace and type `approverUuid` approves, oldest first. */
export function pendingForApprover(db: Db, approverUuid: string): ShareRequestRow[] {
  return db
    .prepare(
      `SELECT r.* FROM share_requests r
       JOIN approvers a ON a.workspace_uuid = r.workspace_uuid AND a.share_type = r.share_type AND a.approver_uuid = ?
       WHERE r.state = 'pending' ORDER BY r.requested_at, r.uuid`,
    )
    .all(approverUuid) as ShareRequestRow[];
}

/** The requests `requesterUuid` made, newest first, except the withdrawn ones. */
export function requestsOf(db: Db, requesterUuid: string): ShareRequestRow[] {
  return db
    .prepare(`SELECT * FROM share_requests WHERE requester_uuid = ? AND state <> 'withdrawn' ORDER BY requested_at DESC, uuid`)
    .all(requesterUuid) as ShareRequestRow[];
}

/** Lets go of the request's snapshot (before it is handed on or released). */
export function detachRequestSnapshot(db: Db, uuid: string): void {
  db.prepare('UPDATE share_requests SET snapshot_uuid = NULL WHERE uuid = ?').run(uuid);
}

/** Records a decision or a withdrawal; the request's snapshot (if any) is the caller's to hand on or release first. */
export function closeShareRequest(
  db: Db,
  uuid: string,
  outcome: { state: Exclude<RequestState, 'pending'>; byUuid: string; comment: string; resultUuid: string | null; nowMs: number },
): void {
  db.prepare(
    `UPDATE share_requests SET state = ?, decided_at = ?, decided_by = ?, decision_comment = ?, result_uuid = ?, snapshot_uuid = NULL
     WHERE uuid = ? AND state = 'pending'`,
  ).run(outcome.state, outcome.nowMs, outcome.byUuid, outcome.comment, outcome.resultUuid, uuid);
}

/** Pending requests in a workspace or by a requester (a deleted owner's), with their snapshots. */
export function requestsTouching(db: Db, ownerUuid: string): ShareRequestRow[] {
  return db
    .prepare('SELECT * FROM share_requests WHERE workspace_uuid = ? OR requester_uuid = ?')
    .all(ownerUuid, ownerUuid) as ShareRequestRow[];
}

export function deleteShareRequest(db: Db, uuid: string): void {
  db.prepare('DELETE FROM share_requests WHERE uuid = ?').run(uuid);
}
