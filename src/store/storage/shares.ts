/**
 * Share links (migration 009; docs/extensions.md "Share links and private shares"): public
 * links, private shares with their recipients, upload links. The SQL only: who may create or
 * remove one is ops/shares.ts's to decide, and what a share grants is access.ts's (it
 * asks privateSharesReaching here). A share goes with its node (ON DELETE CASCADE).
 */
import type { Sql } from './sql.js';
import { jsonValues } from './portable.js';
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

export async function insertShare(sql: Sql, share: ShareRow, recipients: ReadonlyArray<{ type: OwnerType; uuid: string }>): Promise<void> {
  (await sql.run(`INSERT INTO shares (uuid, type, node_uuid, creator_uuid, token_hash, password_hash, expires, writable, created)
     VALUES (@uuid, @type, @node_uuid, @creator_uuid, @token_hash, @password_hash, @expires, @writable, @created)`, { ...share }));
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

const COUNT_COLUMNS = `s.node_uuid AS uuid, SUM(s.type <> 'private') AS pub, SUM(s.type = 'private') AS priv`;

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

/** Hands the shares on an owner's nodes to the user those nodes are transferred to (the receiver vouches for them now). */
export async function reassignOwnerShares(sql: Sql, ownerUuid: string, receiverUuid: string): Promise<void> {
  (await sql.run('UPDATE shares SET creator_uuid = ? WHERE node_uuid IN (SELECT uuid FROM nodes WHERE owner_uuid = ?)', [receiverUuid, ownerUuid]));
}

/** Removes a deleted user or group from every private share; a share left without recipients goes. */
export async function dropRecipient(sql: Sql, recipientUuid: string): Promise<void> {
  (await sql.run('DELETE FROM share_recipients WHERE recipient_uuid = ?', [recipientUuid]));
  (await sql.run(`DELETE FROM shares WHERE type = 'private' AND NOT EXISTS (SELECT 1 FROM share_recipients r WHERE r.share_uuid = shares.uuid)`));
}

/** Removes the shares of the given types on every node of an owner (a transfer with delete_all_*_shares). */
export async function deleteOwnerShares(sql: Sql, ownerUuid: string, types: readonly LinkType[]): Promise<void> {
  if (types.length === 0) return;
  (await sql.run(`DELETE FROM shares WHERE type IN (${jsonValues(sql)}) AND node_uuid IN (SELECT uuid FROM nodes WHERE owner_uuid = ?)`, [JSON.stringify(types), ownerUuid]));
}
