/**
 * Nodes and trees (the repository of node rows, with what happens to an owner's nodes when the
 * owner goes, below): node rows and the lookups every route shares (top-level folders, identifiers
 * in both forms `home`, `home:<owner_uuid>`, children, ancestry), the rows a tree change writes
 * (subtrees, trash, stars) and the listing reads. No rules: what the tree allows is
 * ops/tree.ts's, uploads ops/files.ts's.
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { sqliteConnectionOf } from './dialects/sqlite.js';
import type { Sql } from './sql.js';
import { binaryOrder, jsonValues } from './portable.js';
import { releaseBlobRef } from './blob-refs.js';
import { startFolder } from './tree-changes.js';

export const TOP_LEVEL_KINDS = [
  'home',
  'incoming',
  'trash',
  'public_shares',
  'private_shares',
  'favorites',
  'shared_with_you',
] as const;
export type TopLevelKind = (typeof TOP_LEVEL_KINDS)[number];

/** Top-level folders whose content is computed (favorites) or managed by sharing: no writes into them. */
export const VIRTUAL_KINDS: ReadonlySet<TopLevelKind> = new Set(['favorites', 'public_shares', 'private_shares', 'shared_with_you']);

export type OwnerType = 'User' | 'Group';

/** Owners keep quota and usage in their own table: users or groups. */
export const OWNER_TABLE: Record<OwnerType, string> = { User: 'users', Group: 'groups' };

export interface NodeRow {
  uuid: string;
  owner_uuid: string;
  owner_type: OwnerType;
  parent_uuid: string | null;
  top_kind: TopLevelKind | null;
  name: string;
  type: 'Dir' | 'File';
  created: number;
  updated: number;
  revision: number | null;
  size: number;
  trashed_from: string | null;
  trashed_name: string | null;
  /** The node's numeric id (migration 025): never reused, kept across renames, moves and restores. */
  file_id: number;
}

export function isTopLevelKind(value: string): value is TopLevelKind {
  return (TOP_LEVEL_KINDS as readonly string[]).includes(value);
}

export interface ParsedIdentifier {
  kind: 'uuid' | 'top';
  uuid?: string;
  top?: TopLevelKind;
  /** Owner named in a qualified identifier; undefined for the bare form. */
  owner?: string;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}

/** Parses a `{node_uuid}` path value; undefined when it is neither form. */
export function parseIdentifier(value: string): ParsedIdentifier | undefined {
  if (isUuid(value)) return { kind: 'uuid', uuid: value.toLowerCase() };
  const colon = value.indexOf(':');
  const name = colon === -1 ? value : value.slice(0, colon);
  if (!isTopLevelKind(name)) return undefined;
  if (colon === -1) return { kind: 'top', top: name };
  const owner = value.slice(colon + 1);
  if (!isUuid(owner)) return undefined;
  return { kind: 'top', top: name, owner: owner.toLowerCase() };
}

/** The identifier clients see for a node: its UUID, or the top-level form relative to the caller. */
export function publicId(node: Pick<NodeRow, 'uuid' | 'top_kind' | 'owner_uuid'>, callerUuid: string): string {
  if (node.top_kind === null) return node.uuid;
  return node.owner_uuid === callerUuid ? node.top_kind : `${node.top_kind}:${node.owner_uuid}`;
}

export async function createTopLevelFolders(sql: Sql, ownerType: OwnerType, ownerUuid: string, now: number): Promise<void> {
  for (const kind of TOP_LEVEL_KINDS) {
    await sql.run(
      `INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, top_kind, name, type, created, updated)
       VALUES (?, ?, ?, NULL, ?, ?, 'Dir', ?, ?)`,
      [randomUUID(), ownerUuid, ownerType, kind, kind, now, now],
    );
  }
  await sql.run("INSERT INTO tree_changes (folder_uuid, changes, bytes) SELECT uuid, 1, 0 FROM nodes WHERE owner_uuid = ? AND top_kind IS NOT NULL", [ownerUuid]);
}

/** A node by its UUID, or an owner's top-level folder (a parsed identifier: locatorOf). */
export type NodeLocator = { uuid: string } | { owner: string; top: TopLevelKind };

/** Where a `{node_uuid}` path value points for `callerUuid` (the bare top-level form is theirs); undefined when it is neither form. */
export function locatorOf(identifier: string, callerUuid: string): NodeLocator | undefined {
  const parsed = parseIdentifier(identifier);
  if (!parsed) return undefined;
  return parsed.kind === 'uuid' ? { uuid: parsed.uuid as string } : { owner: parsed.owner ?? callerUuid, top: parsed.top as TopLevelKind };
}

export function findNode(sql: Sql, where: NodeLocator): Promise<NodeRow | undefined> {
  return 'uuid' in where ? getNode(sql, where.uuid) : getTopLevel(sql, where.owner, where.top);
}

export async function getNode(sql: Sql, uuid: string): Promise<NodeRow | undefined> {
  return (await sql.get('SELECT * FROM nodes WHERE uuid = ?', [uuid])) as NodeRow | undefined;
}

/** A node by its numeric id (migration 025). */
export async function getNodeByFileId(sql: Sql, fileId: number): Promise<NodeRow | undefined> {
  return (await sql.get('SELECT * FROM nodes WHERE file_id = ?', [fileId])) as NodeRow | undefined;
}

export async function getTopLevel(sql: Sql, ownerUuid: string, kind: TopLevelKind): Promise<NodeRow | undefined> {
  return (await sql.get('SELECT * FROM nodes WHERE owner_uuid = ? AND top_kind = ?', [ownerUuid, kind])) as NodeRow | undefined;
}

export async function getChildByName(sql: Sql, parentUuid: string, name: string): Promise<NodeRow | undefined> {
  return (await sql.get('SELECT * FROM nodes WHERE parent_uuid = ? AND name = ?', [parentUuid, name])) as NodeRow | undefined;
}

export async function listChildren(sql: Sql, parentUuid: string): Promise<NodeRow[]> {
  return (await sql.all(`SELECT * FROM nodes WHERE parent_uuid = ? ORDER BY type = 'File', ${binaryOrder(sql, 'name')}`, [parentUuid])) as NodeRow[];
}

/** The chain from the top-level folder down to `node` (inclusive). */
export async function ancestry(sql: Sql, node: NodeRow): Promise<NodeRow[]> {
  const rows = (await sql.all(`WITH RECURSIVE chain(uuid, depth) AS (
         SELECT ?, 0
         UNION ALL
         SELECT n.parent_uuid, chain.depth + 1 FROM nodes n JOIN chain ON n.uuid = chain.uuid
         WHERE n.parent_uuid IS NOT NULL
       )
       SELECT nodes.* FROM chain JOIN nodes ON nodes.uuid = chain.uuid ORDER BY chain.depth DESC`, [node.uuid])) as NodeRow[];
  return rows;
}

/**
 * Top-level kinds by node, per SQLite connection (installTopKindCache). Uploads, new folders,
 * copies and moves ask for every request whether their target lies under trash or a virtual
 * folder; the ancestry walk that answers it cost ~35 µs, twice per small upload. Sound because a
 * TEMP trigger of the connection empties the map whenever any node changes parent (in a
 * transaction that commits or rolls back alike), and entries are learnt only outside
 * transactions, from committed rows, and only when no reparenting happened between the walk and
 * the learning (the generation). Bounded: emptied when it holds TOP_KIND_CACHE_LIMIT nodes (~100
 * bytes each). PostgreSQL has no such trigger for another instance's moves: there every answer
 * is walked.
 */
interface TopKindCache {
  kinds: Map<string, TopLevelKind | null>;
  generation: number;
}
const topKindCaches = new WeakMap<Database.Database, TopKindCache>();
const TOP_KIND_CACHE_LIMIT = 20_000;

/** Lets topKindOf remember answers on this SQLite connection (openDatabase calls it). */
export function installTopKindCache(db: Database.Database): void {
  const cache: TopKindCache = { kinds: new Map(), generation: 0 };
  db.function('driveway_node_reparented', { deterministic: false, varargs: false }, () => {
    cache.kinds.clear();
    cache.generation += 1;
    return null;
  });
  db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS node_reparented AFTER UPDATE OF parent_uuid ON main.nodes
           WHEN OLD.parent_uuid IS NOT NEW.parent_uuid
           BEGIN SELECT driveway_node_reparented(); END`);
  topKindCaches.set(db, cache);
}

/** The kind of the top-level folder `node` lives under (its own for a top-level folder). */
export async function topKindOf(sql: Sql, node: Pick<NodeRow, 'uuid' | 'parent_uuid' | 'top_kind'>): Promise<TopLevelKind | null> {
  if (node.parent_uuid === null) return node.top_kind;
  const connection = sql.dialect === 'sqlite' ? sqliteConnectionOf(sql) : undefined;
  const cache = connection && topKindCaches.get(connection);
  const known = cache?.kinds.get(node.uuid);
  if (known !== undefined) return known;
  const generation = cache?.generation;
  const chain = await ancestry(sql, node as NodeRow);
  const kind = chain[0]?.top_kind ?? null;
  if (cache && !sql.inTransaction && cache.generation === generation) {
    if (cache.kinds.size >= TOP_KIND_CACHE_LIMIT) cache.kinds.clear();
    cache.kinds.set(node.uuid, kind);
  }
  return kind;
}

/** True when `candidate` is `ancestor` or lies below it. */
export async function isSelfOrDescendant(sql: Sql, ancestorUuid: string, candidateUuid: string): Promise<boolean> {
  const row = await sql.get(`WITH RECURSIVE up(uuid) AS (
         SELECT ?
         UNION ALL
         SELECT n.parent_uuid FROM nodes n JOIN up ON n.uuid = up.uuid WHERE n.parent_uuid IS NOT NULL
       )
       SELECT 1 AS hit FROM up WHERE uuid = ? LIMIT 1`, [candidateUuid, ancestorUuid]);
  return row !== undefined;
}

/** Every node below `root` (exclusive), parents before children. */
export async function descendants(sql: Sql, rootUuid: string): Promise<NodeRow[]> {
  return (await sql.all(`WITH RECURSIVE sub(uuid, depth) AS (
         SELECT uuid, 1 FROM nodes WHERE parent_uuid = ?
         UNION ALL
         SELECT n.uuid, sub.depth + 1 FROM nodes n JOIN sub ON n.parent_uuid = sub.uuid
       )
       SELECT nodes.* FROM sub JOIN nodes ON nodes.uuid = sub.uuid ORDER BY sub.depth`, [rootUuid])) as NodeRow[];
}

/** Marks a folder as changed (its listing differs now). */
export async function touch(sql: Sql, uuid: string, now: number): Promise<void> {
  await sql.run('UPDATE nodes SET updated = ? WHERE uuid = ?', [now, uuid]);
}

/**
 * The nodes `candidates` (a subquery selecting node UUIDs, with `params`) names, except those
 * lying in trash: one walk up from each to its top-level folder. Folders first, by name.
 */
export async function outsideTrash(sql: Sql, candidates: string, ...params: unknown[]): Promise<NodeRow[]> {
  return (await sql.all(`WITH RECURSIVE up(start, uuid, parent) AS (
         SELECT n.uuid, n.uuid, n.parent_uuid FROM nodes n WHERE n.uuid IN (${candidates})
         UNION ALL
         SELECT up.start, p.uuid, p.parent_uuid FROM up JOIN nodes p ON p.uuid = up.parent
       )
       SELECT n.* FROM up
       JOIN nodes top ON top.uuid = up.uuid
       JOIN nodes n ON n.uuid = up.start
       WHERE up.parent IS NULL AND (top.top_kind IS NULL OR top.top_kind <> 'trash')
       ORDER BY n.type = 'File', ${binaryOrder(sql, 'n.name')}, n.uuid`, [...params])) as NodeRow[];
}

/** A node with its whole subtree: the recursive CTE the statements below start with. */
/** `sub(uuid)`: the node whose UUID is the statement's first parameter, and every node below it. */
export const SUBTREE = `WITH RECURSIVE sub(uuid) AS (
    SELECT ?
    UNION ALL
    SELECT n.uuid FROM nodes n JOIN sub ON n.parent_uuid = sub.uuid
  )`;

/** Bytes of every revision in the subtree of `nodeUuid` (what its owner's `disk_used` counts for it). */
export async function subtreeBytes(sql: Sql, nodeUuid: string): Promise<number> {
  const row = (await sql.get(`${SUBTREE} SELECT COALESCE(SUM(r.size), 0) AS bytes FROM revisions r JOIN sub ON r.node_uuid = sub.uuid`, [nodeUuid])) as {
    bytes: number;
  };
  return row.bytes;
}

/** Every node of the subtree of `nodeUuid` changes owner (the caller moves the usage). */
export async function setSubtreeOwner(sql: Sql, nodeUuid: string, ownerType: OwnerType, ownerUuid: string): Promise<void> {
  await sql.run(`${SUBTREE} UPDATE nodes SET owner_uuid = ?, owner_type = ? WHERE uuid IN (SELECT uuid FROM sub)`, [nodeUuid, ownerUuid, ownerType]);
}

/** The blob and size of every revision in the subtree of `nodeUuid`. */
export function subtreeRevisions(sql: Sql, nodeUuid: string): Promise<Array<{ hash: string; size: number }>> {
  return sql.all(`${SUBTREE} SELECT r.blob_hash AS hash, r.size FROM revisions r JOIN sub ON r.node_uuid = sub.uuid`, [nodeUuid]);
}

/**
 * Deletes `nodeUuid` with its subtree. Revisions and stars go with their nodes (ON DELETE
 * CASCADE); one statement, so the parent references inside the subtree are checked only once it
 * is all gone.
 */
export async function deleteSubtree(sql: Sql, nodeUuid: string): Promise<void> {
  await sql.run(`${SUBTREE} DELETE FROM nodes WHERE uuid IN (SELECT uuid FROM sub)`, [nodeUuid]);
}

/** Inserts a folder row (a file row comes with its revision: storage/revisions.ts); the numeric id it got. */
export async function insertNode(sql: Sql, row: Omit<NodeRow, 'file_id'>): Promise<number> {
  await sql.run(
    `INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, name, type, created, updated)
     VALUES (?, ?, ?, ?, ?, 'Dir', ?, ?)`,
    [row.uuid, row.owner_uuid, row.owner_type, row.parent_uuid, row.name, row.created, row.updated],
  );
  await startFolder(sql, row.uuid, 0);
  return ((await sql.get('SELECT file_id FROM nodes WHERE uuid = ?', [row.uuid])) as { file_id: number }).file_id;
}

export async function renameNode(sql: Sql, uuid: string, name: string): Promise<void> {
  await sql.run('UPDATE nodes SET name = ? WHERE uuid = ?', [name, uuid]);
}

/** Moves a node under another parent; out of trash it forgets where it was deleted from. */
export async function reparentNode(sql: Sql, uuid: string, parentUuid: string): Promise<void> {
  await sql.run('UPDATE nodes SET parent_uuid = ?, trashed_from = NULL, trashed_name = NULL, trashed_at = NULL WHERE uuid = ?', [parentUuid, uuid]);
}

/**
 * Moves `node` into a trash folder as `name`, remembering the folder and name it came from and
 * when (`trashed_at`, what retention's trashDays counts from).
 */
export async function moveNodeToTrash(sql: Sql, node: Pick<NodeRow, 'uuid' | 'name' | 'parent_uuid'>, trashUuid: string, name: string, nowMs: number): Promise<void> {
  await sql.run('UPDATE nodes SET parent_uuid = ?, name = ?, trashed_from = ?, trashed_name = ?, trashed_at = ? WHERE uuid = ?', [trashUuid, name, node.parent_uuid, node.name, nowMs, node.uuid]);
}

export async function addStar(sql: Sql, userUuid: string, nodeUuid: string, nowMs: number): Promise<void> {
  await sql.run('INSERT INTO stars (user_uuid, node_uuid, created) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [userUuid, nodeUuid, nowMs]);
}

export async function removeStar(sql: Sql, userUuid: string, nodeUuid: string): Promise<void> {
  await sql.run('DELETE FROM stars WHERE user_uuid = ? AND node_uuid = ?', [userUuid, nodeUuid]);
}

/**
 * One entry of a subtree to recreate, parents before children: `key` names it among the
 * entries (a node UUID, or a snapshot entry id), `parentKey` its parent (null for the root).
 * Files carry the blob and size of the revision the copy starts from.
 */
export interface TreeEntry {
  key: string | number;
  parentKey: string | number | null;
  name: string;
  type: 'Dir' | 'File';
  blobHash: string | null;
  size: number;
}

/** `node` and its subtree, parents before children, each file with its latest revision. */
export async function latestSubtree(sql: Sql, nodeUuid: string): Promise<TreeEntry[]> {
  const rows = (await sql.all(`WITH RECURSIVE sub(uuid, depth) AS (
         SELECT ?, 0
         UNION ALL
         SELECT n.uuid, sub.depth + 1 FROM nodes n JOIN sub ON n.parent_uuid = sub.uuid
       )
       SELECT n.uuid, n.parent_uuid, n.name, n.type, r.blob_hash, r.size AS blob_size
       FROM sub JOIN nodes n ON n.uuid = sub.uuid
       LEFT JOIN revisions r ON r.node_uuid = n.uuid AND r.revision = n.revision
       ORDER BY sub.depth`, [nodeUuid])) as Array<{ uuid: string; parent_uuid: string | null; name: string; type: 'Dir' | 'File'; blob_hash: string | null; blob_size: number | null }>;
  return rows.map((row, index) => {
    if (row.type === 'File' && (row.blob_hash === null || row.blob_size === null)) throw new Error(`file ${row.uuid} has no stored revision`);
    return { key: row.uuid, parentKey: index === 0 ? null : row.parent_uuid, name: row.name, type: row.type, blobHash: row.blob_hash, size: row.blob_size ?? 0 };
  });
}

/** Bytes of the file entries: what the copy adds to its owner's usage. */
export function entriesBytes(entries: readonly TreeEntry[]): number {
  let bytes = 0;
  for (const entry of entries) if (entry.type === 'File') bytes += entry.size;
  return bytes;
}

/**
 * Creates `entries` as new nodes of `target`'s owner below `target`, the root named `rootName`,
 * each file at revision 1. Adds no blob reference and changes no usage: the caller does (a copy
 * adds references, an accepted share hands over the snapshot's). Returns the root's UUID.
 */
export async function insertTree(
  sql: Sql,
  entries: readonly TreeEntry[],
  target: NodeRow,
  rootName: string,
  { now, uploaderUuid }: { now: number; uploaderUuid: string | null },
): Promise<string> {
  const newUuidOf = new Map<string | number, string>();
  for (const [index, entry] of entries.entries()) {
    const uuid = randomUUID();
    newUuidOf.set(entry.key, uuid);
    const parentUuid = index === 0 ? target.uuid : entry.parentKey === null ? undefined : newUuidOf.get(entry.parentKey);
    if (parentUuid === undefined) throw new Error(`copy of ${entry.key} reached before its parent`);
    const isFile = entry.type === 'File';
    const name = index === 0 ? rootName : entry.name;
    await sql.run(
      `INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, name, type, created, updated, revision, size)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [uuid, target.owner_uuid, target.owner_type, parentUuid, name, entry.type, now, now, isFile ? 1 : null, isFile ? entry.size : 0],
    );
    if (isFile) {
      await sql.run('INSERT INTO revisions (node_uuid, revision, blob_hash, size, created, uploader_uuid) VALUES (?, 1, ?, ?, ?, ?)', [
        uuid,
        entry.blobHash,
        entry.size,
        now,
        uploaderUuid,
      ]);
    }
  }
  // Each new folder starts holding what its copied subtree holds (its first tree_changes row).
  const bytesBelow = new Map<string | number, number>();
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index] as TreeEntry;
    const bytes = entry.type === 'File' ? entry.size : (bytesBelow.get(entry.key) ?? 0);
    if (entry.type === 'Dir') await startFolder(sql, newUuidOf.get(entry.key) as string, bytes);
    if (index > 0 && entry.parentKey !== null) bytesBelow.set(entry.parentKey, (bytesBelow.get(entry.parentKey) ?? 0) + bytes);
  }
  return newUuidOf.get(entries[0]?.key ?? '') as string;
}

/** A folder entry as dirlist needs it, with the caller's star. */
export interface ListedNode {
  uuid: string;
  file_id: number;
  owner_uuid: string;
  top_kind: NodeRow['top_kind'];
  name: string;
  type: 'Dir' | 'File';
  updated: number;
  revision: number | null;
  size: number;
  /** The latest revision's blob checksums (files; NULL until computed: migration 019). */
  sha1: string | null;
  md5: string | null;
  is_starred: boolean;
}

type ListedRow = Omit<ListedNode, 'is_starred'>;
const LISTED_COLUMNS = 'n.uuid, n.file_id, n.owner_uuid, n.top_kind, n.name, n.type, n.updated, n.revision, n.size, b.sha1, b.md5';
/** The latest revision's blob of each listed node `n` (none for folders): by primary keys, no scan. */
const LATEST_BLOB_JOIN = 'LEFT JOIN revisions r ON r.node_uuid = n.uuid AND r.revision = n.revision LEFT JOIN blobs b ON b.hash = r.blob_hash';

/** SHA-1 (and MD5 once known) of the latest revision of each file among `nodeUuids` that has them (one query). */
export async function checksumsOfNodes(sql: Sql, nodeUuids: readonly string[]): Promise<Map<string, { sha1: string; md5?: string }>> {
  const found = new Map<string, { sha1: string; md5?: string }>();
  if (nodeUuids.length === 0) return found;
  const rows = (await sql.all(
    `SELECT n.uuid, b.sha1, b.md5 FROM nodes n ${LATEST_BLOB_JOIN} WHERE n.uuid IN (${jsonValues(sql)}) AND b.sha1 IS NOT NULL`,
    [JSON.stringify(nodeUuids)],
  )) as Array<{ uuid: string; sha1: string; md5: string | null }>;
  for (const row of rows) found.set(row.uuid, row.md5 === null ? { sha1: row.sha1 } : { sha1: row.sha1, md5: row.md5 });
  return found;
}

/**
 * The children of `folderUuid`, folders first, then by name in byte order (SQLite's BINARY
 * collation compares UTF-8 bytes). Two queries whatever the size: the rows, then the caller's
 * stars among them, so a folder of 10,000 entries costs no more round trips than one of ten.
 */
export async function listChildrenWithStars(sql: Sql, folderUuid: string, callerUuid: string): Promise<ListedNode[]> {
  const rows = (await sql.all(`SELECT ${LISTED_COLUMNS} FROM nodes n ${LATEST_BLOB_JOIN} WHERE n.parent_uuid = ? ORDER BY n.type = 'File', ${binaryOrder(sql, 'n.name')}`, [folderUuid])) as ListedRow[];
  const starred = new Set(
    (
      (await sql.all('SELECT s.node_uuid FROM stars s JOIN nodes n ON n.uuid = s.node_uuid WHERE s.user_uuid = ? AND n.parent_uuid = ?', [callerUuid, folderUuid])) as Array<{ node_uuid: string }>
    ).map((r) => r.node_uuid),
  );
  // Filled in place: no second object per entry.
  const listed = rows as ListedNode[];
  for (const row of listed) row.is_starred = starred.has(row.uuid);
  return listed;
}

/** Which of `nodeUuids` the caller starred (one query). */
export async function starredAmong(sql: Sql, callerUuid: string, nodeUuids: readonly string[]): Promise<Set<string>> {
  if (nodeUuids.length === 0) return new Set();
  const rows = (await sql.all(`SELECT node_uuid FROM stars WHERE user_uuid = ? AND node_uuid IN (${jsonValues(sql)})`, [callerUuid, JSON.stringify(nodeUuids)])) as Array<{ node_uuid: string }>;
  return new Set(rows.map((r) => r.node_uuid));
}

/**
 * What `favorites` of `ownerUuid` lists: the caller's starred nodes of that owner, except those
 * in trash (a deleted node is not a favorite until it is restored; its star is kept for then).
 */
export function listFavorites(sql: Sql, ownerUuid: string, callerUuid: string): Promise<NodeRow[]> {
  return outsideTrash(sql, 'SELECT s.node_uuid FROM stars s JOIN nodes o ON o.uuid = s.node_uuid WHERE s.user_uuid = ? AND o.owner_uuid = ?', callerUuid, ownerUuid);
}

// ---- owner data

/**
 * What happens to everything an owner (a user or a group) stores when the owner is deleted:
 * removed for good, or handed to a receiver. Runs inside the caller's transaction, which also
 * deletes the owner's row. Never touches blob files: purging returns the blobs that lost their
 * last reference, and the caller unlinks them after the commit.
 */

export interface Owner {
  type: OwnerType;
  uuid: string;
}

/** The organization of a user or group ('' when it is gone). */
export async function orgOfOwner(sql: Sql, owner: Owner): Promise<string> {
  return ((await sql.get(`SELECT org_id FROM ${OWNER_TABLE[owner.type]} WHERE uuid = ?`, [owner.uuid])) as { org_id: string } | undefined)?.org_id ?? '';
}

/** A user's full name or a group's name ('' when it is gone). */
export async function ownerName(sql: Sql, owner: Owner): Promise<string> {
  const column = owner.type === 'User' ? 'fullname' : 'name';
  return ((await sql.get(`SELECT ${column} AS name FROM ${OWNER_TABLE[owner.type]} WHERE uuid = ?`, [owner.uuid])) as { name: string } | undefined)?.name ?? '';
}

/**
 * Removes every node of `owner` (revisions and stars go with them) and releases their blob
 * references. Returns the hashes no row refers to any more.
 */
export async function purgeOwnerNodes(sql: Sql, owner: Owner): Promise<string[]> {
  const hashes = (await sql.all('SELECT r.blob_hash AS hash FROM revisions r JOIN nodes n ON n.uuid = r.node_uuid WHERE n.owner_uuid = ?', [owner.uuid])) as Array<{ hash: string }>;
  // One statement: the parent references inside the tree are checked once it is all gone.
  await sql.run('DELETE FROM nodes WHERE owner_uuid = ?', [owner.uuid]);
  const unreferenced = new Set<string>();
  for (const { hash } of hashes) if (await releaseBlobRef(sql, hash)) unreferenced.add(hash);
  return [...unreferenced];
}

/** Bytes of every revision of the owner's nodes. */
export async function ownerBytes(sql: Sql, ownerUuid: string): Promise<number> {
  return ((await sql.get<{ bytes: number }>('SELECT COALESCE(SUM(r.size), 0) AS bytes FROM revisions r JOIN nodes n ON n.uuid = r.node_uuid WHERE n.owner_uuid = ?', [ownerUuid])) as { bytes: number }).bytes;
}

/** The owner's top-level folders that hold anything. */
export function nonEmptyTopLevels(sql: Sql, ownerUuid: string): Promise<Array<{ uuid: string; top_kind: string }>> {
  return sql.all(
    `SELECT t.uuid, t.top_kind FROM nodes t WHERE t.owner_uuid = ? AND t.top_kind IS NOT NULL
       AND EXISTS (SELECT 1 FROM nodes c WHERE c.parent_uuid = t.uuid) ORDER BY t.top_kind`,
    [ownerUuid],
  );
}

/** Moves every child of one folder into another; children from trash forget their origin. */
export async function moveChildren(sql: Sql, fromParentUuid: string, toParentUuid: string): Promise<void> {
  await sql.run('UPDATE nodes SET parent_uuid = ?, trashed_from = NULL, trashed_name = NULL, trashed_at = NULL WHERE parent_uuid = ?', [toParentUuid, fromParentUuid]);
}

/** Gives every node of `from` but its top-level folders to `to`, then deletes those folders (emptied first). */
export async function handOverNodes(sql: Sql, from: Owner, to: Owner): Promise<void> {
  await sql.run('UPDATE nodes SET owner_uuid = ?, owner_type = ? WHERE owner_uuid = ? AND top_kind IS NULL', [to.uuid, to.type, from.uuid]);
  await sql.run('DELETE FROM nodes WHERE owner_uuid = ?', [from.uuid]);
}
