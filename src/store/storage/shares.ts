/**
 * Share links (migration 009; docs/extensions.md "Share links and private shares"): public
 * links, private shares with their recipients, upload links. The SQL only: who may create or
 * remove one is ops/shares.ts's to decide, and what a share grants is access.ts's (it
 * asks privateSharesReaching here). A share goes with its node (ON DELETE CASCADE).
 */
import type { Db } from './dialects/sqlite-open.js';
import { outsideTrash, type NodeRow, type OwnerType } from './nodes.js';

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

export function insertShare(db: Db, share: ShareRow, recipients: ReadonlyArray<{ type: OwnerType; uuid: string }>): void {
  db.prepare(
    `INSERT INTO shares (uuid, type, node_uuid, creator_uuid, token_hash, password_hash, expires, writable, created)
     VALUES (@uuid, @type, @node_uuid, @creator_uuid, @token_hash, @password_hash, @expires, @writable, @created)`,
  ).run(share);
  const insert = db.prepare('INSERT OR IGNORE INTO share_recipients (share_uuid, recipient_type, recipient_uuid) VALUES (?, ?, ?)');
  for (const r of recipients) insert.run(share.uuid, r.type, r.uuid);
}

export function getShare(db: Db, uuid: string): ShareRow | undefined {
  return db.prepare('SELECT * FROM shares WHERE uuid = ?').get(uuid) as ShareRow | undefined;
}

export function shareByTokenHash(db: Db, tokenHash: string): ShareRow | undefined {
  return db.prepare('SELECT * FROM shares WHERE token_hash = ?').get(tokenHash) as ShareRow | undefined;
}

export function sharesOfNode(db: Db, nodeUuid: string): ShareRow[] {
  return db.prepare('SELECT * FROM shares WHERE node_uuid = ? ORDER BY created, uuid').all(nodeUuid) as ShareRow[];
}

export function sharesByCreator(db: Db, userUuid: string): ShareRow[] {
  return db.prepare('SELECT * FROM shares WHERE creator_uuid = ? ORDER BY created, uuid').all(userUuid) as ShareRow[];
}

export function recipientsOf(db: Db, shareUuid: string): ShareRecipientRow[] {
  return db.prepare('SELECT * FROM share_recipients WHERE share_uuid = ? ORDER BY recipient_uuid').all(shareUuid) as ShareRecipientRow[];
}

export function deleteShare(db: Db, uuid: string): boolean {
  return db.prepare('DELETE FROM shares WHERE uuid = ?').run(uuid).changes > 0;
}

export interface ShareCounts {
  publicShares: number;
  privateShares: number;
}

type CountRow = { uuid: string; pub: number; priv: number };

function toCountMap(rows: CountRow[]): Map<string, ShareCounts> {
  return new Map(rows.map((r) => [r.uuid, { publicShares: r.pub, privateShares: r.priv }]));
}

const COUNT_COLUMNS = `s.node_uuid AS uuid, SUM(s.type <> 'private') AS pub, SUM(s.type = 'private') AS priv`;

/** Share counts of the children of a folder, in one grouped query (public counts upload links too). */
export function shareCountsIn(db: Db, folderUuid: string): Map<string, ShareCounts> {
  return toCountMap(
    db
      .prepare(`SELECT ${COUNT_COLUMNS} FROM shares s JOIN nodes n ON n.uuid = s.node_uuid WHERE n.parent_uuid = ? GROUP BY s.node_uuid`)
      .all(folderUuid) as CountRow[],
  );
}

/** Share counts of the nodes given, in one grouped query. */
export function shareCountsOf(db: Db, nodeUuids: readonly string[]): Map<string, ShareCounts> {
  if (nodeUuids.length === 0) return new Map();
  return toCountMap(
    db
      .prepare(`SELECT ${COUNT_COLUMNS} FROM shares s WHERE s.node_uuid IN (SELECT value FROM json_each(?)) GROUP BY s.node_uuid`)
      .all(JSON.stringify(nodeUuids)) as CountRow[],
  );
}

/** What `public_shares` (kind `public`: public and upload links) or `private_shares` of an owner lists. */
export function ownerNodesWithShares(db: Db, ownerUuid: string, kind: 'public' | 'private'): NodeRow[] {
  const types = kind === 'public' ? `('public', 'upload')` : `('private')`;
  return outsideTrash(db, `SELECT s.node_uuid FROM shares s JOIN nodes o ON o.uuid = s.node_uuid WHERE o.owner_uuid = ? AND s.type IN ${types}`, ownerUuid);
}

/** What `shared_with_you` of a user or group lists: nodes privately shared with it. */
export function nodesSharedWith(db: Db, recipientUuid: string): NodeRow[] {
  return outsideTrash(db, `SELECT s.node_uuid FROM share_recipients r JOIN shares s ON s.uuid = r.share_uuid WHERE r.recipient_uuid = ?`, recipientUuid);
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
export function privateSharesReaching(db: Db, nodeUuid: string, userUuid: string): PrivateShareReach[] {
  const mine = `r.recipient_uuid = @user OR r.recipient_uuid IN (SELECT group_uuid FROM group_members WHERE user_uuid = @user)`;
  if (db.prepare(`SELECT 1 FROM share_recipients r WHERE ${mine} LIMIT 1`).get({ user: userUuid }) === undefined) return [];
  const rows = db
    .prepare(
      `WITH RECURSIVE up(uuid, parent, depth, top_kind) AS (
         SELECT uuid, parent_uuid, 0, top_kind FROM nodes WHERE uuid = @node
         UNION ALL
         SELECT n.uuid, n.parent_uuid, up.depth + 1, n.top_kind FROM nodes n JOIN up ON n.uuid = up.parent
       )
       SELECT up.uuid AS root, up.depth, s.writable, r.recipient_uuid, s.creator_uuid, (SELECT top_kind FROM up WHERE parent IS NULL) AS top
       FROM up JOIN shares s ON s.node_uuid = up.uuid AND s.type = 'private'
       JOIN share_recipients r ON r.share_uuid = s.uuid
       WHERE ${mine}
       ORDER BY up.depth DESC`,
    )
    .all({ node: nodeUuid, user: userUuid }) as Array<{ root: string; depth: number; writable: number; recipient_uuid: string; creator_uuid: string | null; top: string | null }>;
  if (rows.length === 0 || rows[0]?.top === 'trash') return [];
  return rows.map((r) => ({ root: r.root, depth: r.depth, writable: r.writable === 1, recipientUuid: r.recipient_uuid, creatorUuid: r.creator_uuid }));
}

/** Hands the shares on an owner's nodes to the user those nodes are transferred to (the receiver vouches for them now). */
export function reassignOwnerShares(db: Db, ownerUuid: string, receiverUuid: string): void {
  db.prepare('UPDATE shares SET creator_uuid = ? WHERE node_uuid IN (SELECT uuid FROM nodes WHERE owner_uuid = ?)').run(receiverUuid, ownerUuid);
}

/** Removes a deleted user or group from every private share; a share left without recipients goes. */
export function dropRecipient(db: Db, recipientUuid: string): void {
  db.prepare('DELETE FROM share_recipients WHERE recipient_uuid = ?').run(recipientUuid);
  db.prepare(`DELETE FROM shares WHERE type = 'private' AND NOT EXISTS (SELECT 1 FROM share_recipients r WHERE r.share_uuid = shares.uuid)`).run();
}

/** Removes the shares of the given types on every node of an owner (a transfer with delete_all_*_shares). */
export function deleteOwnerShares(db: Db, ownerUuid: string, types: readonly LinkType[]): void {
  if (types.length === 0) return;
  db.prepare(
    `DELETE FROM shares WHERE type IN (SELECT value FROM json_each(?)) AND node_uuid IN (SELECT uuid FROM nodes WHERE owner_uuid = ?)`,
  ).run(JSON.stringify(types), ownerUuid);
}
