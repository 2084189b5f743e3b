/**
 * Shares and requests: share links, approvals, incoming shares and snapshots (sections below).
 * Share links (migration 009; docs/extensions.md "Share links and private shares"): public
 * links, private shares with their recipients, upload links. The SQL only: who may create or
 * remove one is ops/shares.ts's to decide, and what a share grants is access.ts's (it
 * asks privateSharesReaching here). A share goes with its node (ON DELETE CASCADE).
 */
import type { Sql } from './sql.js';
import { jsonValues, folded } from './portable.js';
import { outsideTrash, type NodeRow, type OwnerType, entriesBytes, latestSubtree, type TreeEntry } from './nodes.js';
import { randomUUID } from 'node:crypto';
import { flatMapInOrder } from '../in-order.js';
import { releaseBlobRef } from './blob-refs.js';
import { addEntryRefs } from './revisions.js';

export type LinkType = 'public' | 'private' | 'upload';

export interface ShareRow {
  uuid: string;
  type: LinkType;
  node_uuid: string;
  creator_uuid: string | null;
  token_hash: string | null;
  password_hash: string | null;
  expires: number | null;
  writable: number;
  created: number;
}

export interface ShareRecipientRow {
  share_uuid: string;
  recipient_type: OwnerType;
  recipient_uuid: string;
}

export async function insertShare(sql: Sql, share: ShareRow, recipients: ReadonlyArray<{ type: OwnerType; uuid: string }>): Promise<void> {
  await sql.run(`INSERT INTO shares (uuid, type, node_uuid, creator_uuid, token_hash, password_hash, expires, writable, created)
     VALUES (@uuid, @type, @node_uuid, @creator_uuid, @token_hash, @password_hash, @expires, @writable, @created)`, { ...share });
  for (const r of recipients) {
    await sql.run('INSERT INTO share_recipients (share_uuid, recipient_type, recipient_uuid) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [share.uuid, r.type, r.uuid]);
  }
}

export async function getShare(sql: Sql, uuid: string): Promise<ShareRow | undefined> {
  return (await sql.get('SELECT * FROM shares WHERE uuid = ?', [uuid])) as ShareRow | undefined;
}

export async function shareByTokenHash(sql: Sql, tokenHash: string): Promise<ShareRow | undefined> {
  return (await sql.get('SELECT * FROM shares WHERE token_hash = ?', [tokenHash])) as ShareRow | undefined;
}

export async function sharesOfNode(sql: Sql, nodeUuid: string): Promise<ShareRow[]> {
  return (await sql.all('SELECT * FROM shares WHERE node_uuid = ? ORDER BY created, uuid', [nodeUuid])) as ShareRow[];
}

export async function sharesByCreator(sql: Sql, userUuid: string): Promise<ShareRow[]> {
  return (await sql.all('SELECT * FROM shares WHERE creator_uuid = ? ORDER BY created, uuid', [userUuid])) as ShareRow[];
}

export async function recipientsOf(sql: Sql, shareUuid: string): Promise<ShareRecipientRow[]> {
  return (await sql.all('SELECT * FROM share_recipients WHERE share_uuid = ? ORDER BY recipient_uuid', [shareUuid])) as ShareRecipientRow[];
}

/** A link's changeable fields (ops/shares.ts updateShare): its type, password hash and expiry. */
export async function updateLink(sql: Sql, uuid: string, fields: Pick<ShareRow, 'type' | 'password_hash' | 'expires'>): Promise<void> {
  await sql.run('UPDATE shares SET type = ?, password_hash = ?, expires = ? WHERE uuid = ?', [fields.type, fields.password_hash, fields.expires, uuid]);
}

export async function deleteShare(sql: Sql, uuid: string): Promise<boolean> {
  return (await sql.run('DELETE FROM shares WHERE uuid = ?', [uuid])).changes > 0;
}

export interface ShareCounts {
  publicShares: number;
  privateShares: number;
}

type CountRow = { uuid: string; pub: number; priv: number };

function toCountMap(rows: CountRow[]): Map<string, ShareCounts> {
  return new Map(rows.map((r) => [r.uuid, { publicShares: r.pub, privateShares: r.priv }]));
}

// Counted with CASE: PostgreSQL sums no booleans.
const COUNT_COLUMNS = `s.node_uuid AS uuid, SUM(CASE WHEN s.type <> 'private' THEN 1 ELSE 0 END) AS pub, SUM(CASE WHEN s.type = 'private' THEN 1 ELSE 0 END) AS priv`;

/** Share counts of the children of a folder, in one grouped query (public counts upload links too). */
export async function shareCountsIn(sql: Sql, folderUuid: string): Promise<Map<string, ShareCounts>> {
  return toCountMap(
    (await sql.all(`SELECT ${COUNT_COLUMNS} FROM shares s JOIN nodes n ON n.uuid = s.node_uuid WHERE n.parent_uuid = ? GROUP BY s.node_uuid`, [folderUuid])) as CountRow[],
  );
}

/** Share counts of the nodes given, in one grouped query. */
export async function shareCountsOf(sql: Sql, nodeUuids: readonly string[]): Promise<Map<string, ShareCounts>> {
  if (nodeUuids.length === 0) return new Map();
  return toCountMap(
    (await sql.all(`SELECT ${COUNT_COLUMNS} FROM shares s WHERE s.node_uuid IN (${jsonValues(sql)}) GROUP BY s.node_uuid`, [JSON.stringify(nodeUuids)])) as CountRow[],
  );
}

/** What `public_shares` (kind `public`: public and upload links) or `private_shares` of an owner lists. */
export function ownerNodesWithShares(sql: Sql, ownerUuid: string, kind: 'public' | 'private'): Promise<NodeRow[]> {
  const types = kind === 'public' ? `('public', 'upload')` : `('private')`;
  return outsideTrash(sql, `SELECT s.node_uuid FROM shares s JOIN nodes o ON o.uuid = s.node_uuid WHERE o.owner_uuid = ? AND s.type IN ${types}`, ownerUuid);
}

/** What `shared_with_you` of a user or group lists: nodes privately shared with it. */
export function nodesSharedWith(sql: Sql, recipientUuid: string): Promise<NodeRow[]> {
  return outsideTrash(sql, `SELECT s.node_uuid FROM share_recipients r JOIN shares s ON s.uuid = r.share_uuid WHERE r.recipient_uuid = ?`, recipientUuid);
}

/** One private share reaching a node for a caller: what access.ts needs to decide what it gives. */
export interface PrivateShareReach {
  /** The shared node (the node itself or an ancestor), and how far above the node it lies (0: the node). */
  root: string;
  depth: number;
  writable: boolean;
  /** Whom it was shared with (the caller or one of their groups). */
  recipientUuid: string;
  /** Who made it; null once that user was deleted. */
  creatorUuid: string | null;
}

/**
 * The private shares reaching `nodeUuid` for `userUuid` (directly or through a group), topmost
 * first: one index probe when the user has none at all, else one walk up the node's ancestry.
 * None while the node lies in trash.
 */
export async function privateSharesReaching(sql: Sql, nodeUuid: string, userUuid: string): Promise<PrivateShareReach[]> {
  const mine = `r.recipient_uuid = @user OR r.recipient_uuid IN (SELECT group_uuid FROM group_members WHERE user_uuid = @user)`;
  if ((await sql.get(`SELECT 1 FROM share_recipients r WHERE ${mine} LIMIT 1`, { user: userUuid })) === undefined) return [];
  const rows = (await sql.all(`WITH RECURSIVE up(uuid, parent, depth, top_kind) AS (
         SELECT uuid, parent_uuid, 0, top_kind FROM nodes WHERE uuid = @node
         UNION ALL
         SELECT n.uuid, n.parent_uuid, up.depth + 1, n.top_kind FROM nodes n JOIN up ON n.uuid = up.parent
       )
       SELECT up.uuid AS root, up.depth, s.writable, r.recipient_uuid, s.creator_uuid, (SELECT top_kind FROM up WHERE parent IS NULL) AS top
       FROM up JOIN shares s ON s.node_uuid = up.uuid AND s.type = 'private'
       JOIN share_recipients r ON r.share_uuid = s.uuid
       WHERE ${mine}
       ORDER BY up.depth DESC`, { node: nodeUuid, user: userUuid })) as Array<{ root: string; depth: number; writable: number; recipient_uuid: string; creator_uuid: string | null; top: string | null }>;
  if (rows.length === 0 || rows[0]?.top === 'trash') return [];
  return rows.map((r) => ({ root: r.root, depth: r.depth, writable: r.writable === 1, recipientUuid: r.recipient_uuid, creatorUuid: r.creator_uuid }));
}

const ON_OWNER_NODES = 'node_uuid IN (SELECT uuid FROM nodes WHERE owner_uuid = ?)';
const BY_CREATOR = (creatorUuid: string | null) => (creatorUuid === null ? 'creator_uuid IS NULL' : 'creator_uuid = ?');
const creatorParam = (creatorUuid: string | null): string[] => (creatorUuid === null ? [] : [creatorUuid]);

/** Who made the shares on an owner's nodes, once each (null: a deleted user). */
export async function shareCreatorsOn(sql: Sql, ownerUuid: string): Promise<Array<string | null>> {
  return (await sql.all<{ creator_uuid: string | null }>(`SELECT DISTINCT creator_uuid FROM shares WHERE ${ON_OWNER_NODES}`, [ownerUuid])).map((r) => r.creator_uuid);
}

/** Makes `toCreator` the creator of the shares `fromCreator` made on an owner's nodes (a transfer's receiver vouching for them now). */
export async function reassignOwnerShares(sql: Sql, ownerUuid: string, fromCreator: string, toCreator: string): Promise<void> {
  await sql.run(`UPDATE shares SET creator_uuid = ? WHERE creator_uuid = ? AND ${ON_OWNER_NODES}`, [toCreator, fromCreator, ownerUuid]);
}

/** Removes the shares `creatorUuid` made (null: a deleted user) on an owner's nodes; their recipients go with them. */
export async function deleteOwnerSharesBy(sql: Sql, ownerUuid: string, creatorUuid: string | null): Promise<void> {
  await sql.run(`DELETE FROM shares WHERE ${BY_CREATOR(creatorUuid)} AND ${ON_OWNER_NODES}`, [...creatorParam(creatorUuid), ownerUuid]);
}

/** Removes a deleted user or group from every private share; a share left without recipients goes. */
export async function dropRecipient(sql: Sql, recipientUuid: string): Promise<void> {
  await sql.run('DELETE FROM share_recipients WHERE recipient_uuid = ?', [recipientUuid]);
  await sql.run(`DELETE FROM shares WHERE type = 'private' AND NOT EXISTS (SELECT 1 FROM share_recipients r WHERE r.share_uuid = shares.uuid)`);
}

/** Removes the shares of the given types on every node of an owner (a transfer with delete_all_*_shares). */
export async function deleteOwnerShares(sql: Sql, ownerUuid: string, types: readonly LinkType[]): Promise<void> {
  if (types.length === 0) return;
  await sql.run(`DELETE FROM shares WHERE type IN (${jsonValues(sql)}) AND ${ON_OWNER_NODES}`, [JSON.stringify(types), ownerUuid]);
}

// ---- approvals

/**
 * Approvers and share approval requests (docs/api.md "Share approval", migration 009). The SQL only:
 * who may add approvers, decide or withdraw is ops/approvals.ts's to check. Multi-row writes run
 * inside the caller's transaction.
 */

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
  await sql.run(`INSERT INTO share_requests (uuid, workspace_type, workspace_uuid, share_type, requester_uuid, node_uuid, node_name, node_type, details, snapshot_uuid, comment, requested_at)
     VALUES (@uuid, @workspace_type, @workspace_uuid, @share_type, @requester_uuid, @node_uuid, @node_name, @node_type, @details, @snapshot_uuid, @comment, @requested_at)`, r);
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
  await sql.run('UPDATE share_requests SET snapshot_uuid = NULL WHERE uuid = ?', [uuid]);
}

/** Records a decision or a withdrawal; the request's snapshot (if any) is the caller's to hand on or release first. */
export async function closeShareRequest(
  sql: Sql,
  uuid: string,
  outcome: { state: Exclude<RequestState, 'pending'>; byUuid: string; comment: string; resultUuid: string | null; nowMs: number },
): Promise<void> {
  await sql.run(`UPDATE share_requests SET state = ?, decided_at = ?, decided_by = ?, decision_comment = ?, result_uuid = ?, snapshot_uuid = NULL
     WHERE uuid = ? AND state = 'pending'`, [outcome.state, outcome.nowMs, outcome.byUuid, outcome.comment, outcome.resultUuid, uuid]);
}

/** Pending requests in a workspace or by a requester (a deleted owner's), with their snapshots. */
export async function requestsTouching(sql: Sql, ownerUuid: string): Promise<ShareRequestRow[]> {
  return (await sql.all('SELECT * FROM share_requests WHERE workspace_uuid = ? OR requester_uuid = ?', [ownerUuid, ownerUuid])) as ShareRequestRow[];
}

export async function deleteShareRequest(sql: Sql, uuid: string): Promise<void> {
  await sql.run('DELETE FROM share_requests WHERE uuid = ?', [uuid]);
}

// ---- incoming shares

/**
 * Incoming shares (docs/api.md "Pending incoming share": pending, accepted, rejected; migration 009):
 * a copy offered to a user or a group, held as a snapshot while pending. This module owns the SQL
 * and the two answers; ops/incoming.ts decides who may answer. Every function runs inside the
 * caller's transaction; released blobs are returned for unlinking after the commit.
 */

export type IncomingState = 'pending' | 'accepted' | 'rejected';

export interface IncomingShareRow {
  uuid: string;
  recipient_type: OwnerType;
  recipient_uuid: string;
  sharer_uuid: string | null;
  sharer_fullname: string;
  source_uuid: string | null;
  name: string;
  type: 'Dir' | 'File';
  size: number;
  snapshot_uuid: string | null;
  state: IncomingState;
  shared_at: number;
  answered_at: number | null;
  answered_by: string | null;
  node_uuid: string | null;
}

export interface Recipient {
  type: OwnerType;
  uuid: string;
}

/** Offers `snapshot` (which the new row holds from now on) to `recipient`; returns the row's UUID. */
export async function offerSnapshot(sql: Sql, snapshot: SnapshotRow, recipient: Recipient, sharer: { uuid: string; fullname: string }, nowMs: number): Promise<string> {
  const uuid = randomUUID();
  await sql.run(`INSERT INTO incoming_shares (uuid, recipient_type, recipient_uuid, sharer_uuid, sharer_fullname, source_uuid, name, type, size, snapshot_uuid, shared_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [uuid, recipient.type, recipient.uuid, sharer.uuid, sharer.fullname, snapshot.source_uuid, snapshot.name, snapshot.type, snapshot.bytes, snapshot.uuid, nowMs]);
  return uuid;
}

export async function getIncomingShare(sql: Sql, uuid: string): Promise<IncomingShareRow | undefined> {
  return (await sql.get('SELECT * FROM incoming_shares WHERE uuid = ?', [uuid])) as IncomingShareRow | undefined;
}

/** The shares awaiting an answer from `recipientUuid`, oldest first. */
export async function pendingFor(sql: Sql, recipientUuid: string): Promise<IncomingShareRow[]> {
  return (await sql.all(`SELECT * FROM incoming_shares WHERE recipient_uuid = ? AND state = 'pending' ORDER BY shared_at, uuid`, [recipientUuid])) as IncomingShareRow[];
}

/** Marks a pending share accepted; its snapshot is about to become nodes (ops/share-copy.ts). */
export async function markIncomingAccepted(sql: Sql, shareUuid: string, nowMs: number, answeredBy: string | null): Promise<void> {
  await sql.run(`UPDATE incoming_shares SET state = 'accepted', snapshot_uuid = NULL, answered_at = ?, answered_by = ? WHERE uuid = ?`, [nowMs, answeredBy, shareUuid]);
}

/** The copy an accepted share became. */
export async function setIncomingNode(sql: Sql, shareUuid: string, nodeUuid: string): Promise<void> {
  await sql.run('UPDATE incoming_shares SET node_uuid = ? WHERE uuid = ?', [nodeUuid, shareUuid]);
}

/** Rejects a pending share: its copy is discarded. Returns the blobs no row refers to any more. */
export async function rejectIncoming(sql: Sql, share: IncomingShareRow, answeredBy: string, nowMs: number): Promise<string[]> {
  if (share.snapshot_uuid === null) throw new Error(`incoming share ${share.uuid} is not pending`);
  await sql.run(`UPDATE incoming_shares SET state = 'rejected', snapshot_uuid = NULL, answered_at = ?, answered_by = ? WHERE uuid = ?`, [nowMs,
    answeredBy,
    share.uuid]);
  return releaseSnapshot(sql, share.snapshot_uuid);
}

/**
 * Forgets every incoming share of a deleted user or group (pending ones release their copy).
 * Shares it sent stay with their recipients (the sharer column empties itself).
 */
export async function dropIncomingOf(sql: Sql, recipientUuid: string): Promise<string[]> {
  const pending = await pendingFor(sql, recipientUuid);
  await sql.run('DELETE FROM incoming_shares WHERE recipient_uuid = ?', [recipientUuid]);
  return flatMapInOrder(pending, async (share) => (share.snapshot_uuid === null ? [] : await releaseSnapshot(sql, share.snapshot_uuid)));
}

// ---- snapshots

/**
 * Snapshots: the copy a share_copy takes of a subtree, without node rows (migration 009). Each
 * file entry holds one reference of its blob, so the bytes survive whatever happens to the
 * original, no blob is duplicated, and nobody's `disk_used` counts them while they wait.
 * Accepting hands the references to new nodes (materialise); rejecting, withdrawing and deleting
 * release them and return the blobs nobody refers to any more, for the caller to unlink after
 * its commit. Run inside the caller's transaction; who may do what is decided in ops/.
 */

export interface SnapshotRow {
  uuid: string;
  source_uuid: string | null;
  name: string;
  type: 'Dir' | 'File';
  bytes: number;
  created: number;
}

async function insertSnapshot(sql: Sql, head: SnapshotRow, entries: readonly TreeEntry[]): Promise<void> {
  await sql.run('INSERT INTO snapshots (uuid, source_uuid, name, type, bytes, created) VALUES (?, ?, ?, ?, ?, ?)', [head.uuid,
    head.source_uuid,
    head.name,
    head.type,
    head.bytes,
    head.created]);
  const idOf = new Map<string | number, number>();
  for (const [id, entry] of entries.entries()) {
    idOf.set(entry.key, id);
    const parentId = entry.parentKey === null ? null : idOf.get(entry.parentKey);
    if (parentId === undefined) throw new Error(`snapshot entry ${entry.key} reached before its parent`);
    await sql.run('INSERT INTO snapshot_entries (snapshot_uuid, id, parent_id, name, type, blob_hash, size) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      head.uuid,
      id,
      parentId,
      entry.name,
      entry.type,
      entry.blobHash,
      entry.size,
    ]);
  }
  await addEntryRefs(sql, entries);
}

/** Takes a snapshot of `node` and its subtree (each file's latest revision). */
export async function takeSnapshot(sql: Sql, node: NodeRow, nowMs: number): Promise<SnapshotRow> {
  const entries = await latestSubtree(sql, node.uuid);
  const head: SnapshotRow = { uuid: randomUUID(), source_uuid: node.uuid, name: node.name, type: node.type, bytes: entriesBytes(entries), created: nowMs };
  await insertSnapshot(sql, head, entries);
  return head;
}

export async function getSnapshot(sql: Sql, uuid: string): Promise<SnapshotRow | undefined> {
  return (await sql.get('SELECT * FROM snapshots WHERE uuid = ?', [uuid])) as SnapshotRow | undefined;
}

export async function entriesOf(sql: Sql, uuid: string): Promise<TreeEntry[]> {
  const rows = (await sql.all('SELECT id, parent_id, name, type, blob_hash, size FROM snapshot_entries WHERE snapshot_uuid = ? ORDER BY id', [uuid])) as Array<{ id: number; parent_id: number | null; name: string; type: 'Dir' | 'File'; blob_hash: string | null; size: number }>;
  return rows.map((r) => ({ key: r.id, parentKey: r.parent_id, name: r.name, type: r.type, blobHash: r.blob_hash, size: r.size }));
}

/** A second snapshot with the same content and references of its own (one per recipient). */
export async function cloneSnapshot(sql: Sql, uuid: string, nowMs: number): Promise<SnapshotRow> {
  const source = await getSnapshot(sql, uuid);
  if (!source) throw new Error(`no snapshot ${uuid}`);
  const head: SnapshotRow = { ...source, uuid: randomUUID(), created: nowMs };
  await insertSnapshot(sql, head, await entriesOf(sql, uuid));
  return head;
}

export async function deleteSnapshotRows(sql: Sql, uuid: string): Promise<void> {
  await sql.run('DELETE FROM snapshot_entries WHERE snapshot_uuid = ?', [uuid]);
  await sql.run('DELETE FROM snapshots WHERE uuid = ?', [uuid]);
}

/** Drops the snapshot and its references; returns the hashes of blobs no row refers to any more. */
export async function releaseSnapshot(sql: Sql, uuid: string): Promise<string[]> {
  const hashes = (await sql.all('SELECT blob_hash AS hash FROM snapshot_entries WHERE snapshot_uuid = ? AND blob_hash IS NOT NULL', [uuid])) as Array<{
    hash: string;
  }>;
  await deleteSnapshotRows(sql, uuid);
  const unreferenced = new Set<string>();
  for (const { hash } of hashes) if (await releaseBlobRef(sql, hash)) unreferenced.add(hash);
  return [...unreferenced];
}
