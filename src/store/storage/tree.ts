/**
 * Tree-changing operations on nodes: create folder, rename, move, copy, move to trash and
 * purge from trash (docs/store-semantics.md, "Names" and "Nodes"). Each runs in one
 * transaction and either changes everything it should or nothing. Callers pass nodes that
 * resolveNode (access.ts) already granted; this module decides only what the tree allows,
 * never who may ask. It never touches blob files: purge returns the blobs that lost their last
 * reference, and the caller unlinks them after the commit. The listing reads that dirlist
 * needs (children with the caller's stars, favorites) live here too.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from './sql.js';
import { jsonValues } from './portable.js';
import { addBlobRef, adjustUsage, assertRoom, releaseBlobRef } from './blobs.js';
import { getChildByName, getTopLevel, isSelfOrDescendant, outsideTrash, topKindOf, touch, VIRTUAL_KINDS, type NodeRow } from './nodes.js';
import { conflict, forbidden } from '../envelope.js';

/** Who changes the tree, and when. */
export interface TreeWrite {
  sql: Sql;
  now: number;
  callerUuid: string;
}

const MAX_NAME_BYTES = 255;

function assertNotTopLevel(node: NodeRow, verb: string): void {
  if (node.top_kind !== null) throw forbidden(`a top-level folder cannot be ${verb}`, 'top_level_immutable');
}

/**
 * A folder new entries may enter by new_dir, copy_to or move_to. Trash is refused like the
 * virtual folders: DELETE is the only way in, so every node there knows where it came from.
 */
async function assertWritableFolder(sql: Sql, target: NodeRow): Promise<void> {
  if (target.type !== 'Dir') throw conflict('the target is not a folder', 'not_a_folder');
  const top = (await topKindOf(sql, target));
  if (top !== null && VIRTUAL_KINDS.has(top)) {
    throw forbidden(`nothing can be placed in ${top}`, 'virtual_folder');
  }
  if (top === 'trash') throw forbidden('nothing can be placed in trash; delete the node instead', 'virtual_folder');
}

/** A node with its whole subtree: the recursive CTE the statements below start with. */
const SUBTREE = `WITH RECURSIVE sub(uuid) AS (
    SELECT ?
    UNION ALL
    SELECT n.uuid FROM nodes n JOIN sub ON n.parent_uuid = sub.uuid
  )`;

/** Bytes of every revision in the subtree of `nodeUuid` (what its owner's `disk_used` counts for it). */
async function subtreeBytes(sql: Sql, nodeUuid: string): Promise<number> {
  const row = (await sql.get(`${SUBTREE} SELECT COALESCE(SUM(r.size), 0) AS bytes FROM revisions r JOIN sub ON r.node_uuid = sub.uuid`, [nodeUuid])) as {
    bytes: number;
  };
  return row.bytes;
}

/**
 * Gives `node` with its subtree to another owner: every node changes owner, and the bytes of
 * every revision move from one owner's usage to the other's. The receiver's quota is checked
 * first (507, nothing changed). Run inside the caller's transaction.
 */
async function giveToOwner(sql: Sql, node: NodeRow, receiver: Pick<NodeRow, 'owner_type' | 'owner_uuid'>): Promise<void> {
  const bytes = (await subtreeBytes(sql, node.uuid));
  (await assertRoom(sql, receiver, bytes));
  (await sql.run(`${SUBTREE} UPDATE nodes SET owner_uuid = ?, owner_type = ? WHERE uuid IN (SELECT uuid FROM sub)`, [node.uuid,
    receiver.owner_uuid,
    receiver.owner_type]));
  (await adjustUsage(sql, node.owner_type, node.owner_uuid, -bytes));
  (await adjustUsage(sql, receiver.owner_type, receiver.owner_uuid, bytes));
}

async function assertNameFree(sql: Sql, folderUuid: string, name: string): Promise<void> {
  if ((await getChildByName(sql, folderUuid, name))) throw conflict(`"${name}" exists in the target folder`);
}

export async function isInTrash(sql: Sql, node: NodeRow): Promise<boolean> {
  return (await topKindOf(sql, node)) === 'trash';
}

/** Creates folder `name` in `parent`; returns the new row. */
export async function createFolder(w: TreeWrite, parent: NodeRow, name: string): Promise<NodeRow> {
  const { sql, now } = w;
  return (await sql.transaction(async (tx) => {
    (await assertWritableFolder(tx, parent));
    (await assertNameFree(tx, parent.uuid, name));
    const row: NodeRow = {
      uuid: randomUUID(),
      owner_uuid: parent.owner_uuid,
      owner_type: parent.owner_type,
      parent_uuid: parent.uuid,
      top_kind: null,
      name,
      type: 'Dir',
      created: now,
      updated: now,
      revision: null,
      size: 0,
      trashed_from: null,
      trashed_name: null,
    };
    (await tx.run(`INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, name, type, created, updated)
       VALUES (?, ?, ?, ?, ?, 'Dir', ?, ?)`, [row.uuid, row.owner_uuid, row.owner_type, row.parent_uuid, row.name, now, now]));
    (await touch(tx, parent.uuid, now));
    return row;
  }));
}

/** Renames `node` in place. Renaming to its current name changes nothing. */
export async function rename(w: TreeWrite, node: NodeRow, newName: string): Promise<void> {
  const { sql, now } = w;
  (await sql.transaction(async (tx) => {
    assertNotTopLevel(node, 'renamed');
    if (node.name === newName) return;
    const parentUuid = node.parent_uuid as string;
    (await assertNameFree(tx, parentUuid, newName));
    (await tx.run('UPDATE nodes SET name = ? WHERE uuid = ?', [newName, node.uuid]));
    (await touch(tx, parentUuid, now));
    if (node.type === 'Dir') (await touch(tx, node.uuid, now));
  }));
}

/**
 * Moves `node` (with its subtree) into `target`. Out of trash this is the restore: the node
 * forgets where it was deleted from. Moving into the folder it is in changes nothing. Into
 * another owner's folder (a user's and a group's tree, either way, or two groups) the subtree
 * changes owner and its bytes move to the receiver's usage, within the receiver's quota (507).
 */
export async function moveInto(w: TreeWrite, node: NodeRow, target: NodeRow): Promise<void> {
  const { sql, now } = w;
  (await sql.transaction(async (tx) => {
    assertNotTopLevel(node, 'moved');
    (await assertWritableFolder(tx, target));
    if ((await isSelfOrDescendant(tx, node.uuid, target.uuid))) {
      throw conflict('a folder cannot be moved into itself or its descendants', 'move_into_self');
    }
    const fromUuid = node.parent_uuid as string;
    if (fromUuid === target.uuid) return;
    (await assertNameFree(tx, target.uuid, node.name));
    if (node.owner_uuid !== target.owner_uuid) (await giveToOwner(tx, node, target));
    (await tx.run('UPDATE nodes SET parent_uuid = ?, trashed_from = NULL, trashed_name = NULL WHERE uuid = ?', [target.uuid, node.uuid]));
    (await touch(tx, fromUuid, now));
    (await touch(tx, target.uuid, now));
    if (node.type === 'Dir') (await touch(tx, node.uuid, now));
  }));
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

/** One reference per file entry, counted per blob. */
export async function addEntryRefs(sql: Sql, entries: readonly TreeEntry[]): Promise<void> {
  const refsByHash = new Map<string, { sizeBytes: number; count: number }>();
  for (const entry of entries) {
    if (entry.blobHash === null) continue;
    const refs = refsByHash.get(entry.blobHash);
    if (refs) refs.count += 1;
    else refsByHash.set(entry.blobHash, { sizeBytes: entry.size, count: 1 });
  }
  for (const [hash, refs] of refsByHash) (await addBlobRef(sql, hash, refs.sizeBytes, refs.count));
}

/**
 * Creates `entries` as new nodes of `target`'s owner below `target`, the root named `rootName`,
 * each file at revision 1. Adds no blob reference and changes no usage: the caller does (a copy
 * adds references, an accepted share hands over the snapshot's). Returns the root's UUID.
 */
export async function insertTree(w: TreeWrite, entries: readonly TreeEntry[], target: NodeRow, rootName: string): Promise<string> {
  const { sql, now, callerUuid } = w;
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
        callerUuid,
      ]);
    }
  }
  return newUuidOf.get(entries[0]?.key ?? '') as string;
}

/**
 * Copies `node` into `target`: folders with their whole subtree, files as a new file whose
 * revision 1 is the source's latest revision. Bytes are shared by reference, never copied;
 * the copy belongs to the target's owner and counts toward that owner's quota, checked before
 * anything is written (507).
 * Returns the UUID of the copy.
 */
export async function copyInto(w: TreeWrite, node: NodeRow, target: NodeRow): Promise<string> {
  const { sql, now } = w;
  return (await sql.transaction(async (tx) => {
    assertNotTopLevel(node, 'copied');
    (await assertWritableFolder(tx, target));
    if ((await isSelfOrDescendant(tx, node.uuid, target.uuid))) {
      throw conflict('a folder cannot be copied into itself or its descendants', 'move_into_self');
    }
    (await assertNameFree(tx, target.uuid, node.name));
    const entries = (await latestSubtree(tx, node.uuid));
    const totalBytes = entriesBytes(entries);
    (await assertRoom(tx, target, totalBytes));
    const copyUuid = await insertTree({ ...w, sql: tx }, entries, target, node.name);
    (await addEntryRefs(tx, entries));
    (await adjustUsage(tx, target.owner_type, target.owner_uuid, totalBytes));
    (await touch(tx, target.uuid, now));
    return copyUuid;
  }));
}

/** `name` if `folder` has no entry of that name, else the first free `name (n)` (numberedName). */
export async function freeName(sql: Sql, folderUuid: string, name: string, type: 'Dir' | 'File'): Promise<string> {
  let candidate = name;
  for (let n = 2; (await getChildByName(sql, folderUuid, candidate)); n += 1) candidate = numberedName(name, type, n);
  return candidate;
}

/**
 * `name (n).ext` for files (the extension is what follows the last dot, unless the name
 * starts with it), `name (n)` for folders; shortened so it stays within the name rule.
 */
export function numberedName(name: string, type: 'Dir' | 'File', n: number): string {
  const dot = type === 'File' ? name.lastIndexOf('.') : -1;
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : '';
  const suffix = ` (${n})${ext}`;
  let chars = Array.from(stem);
  while (chars.length > 0 && Buffer.byteLength(chars.join('') + suffix, 'utf8') > MAX_NAME_BYTES) chars = chars.slice(0, -1);
  return chars.join('') + suffix;
}

/**
 * DELETE outside trash: moves `node` with its subtree into its owner's trash, remembering the
 * folder and name it came from. Usage is unchanged: trash counts toward the quota.
 * Returns the name it has in trash.
 */
export async function trash(w: TreeWrite, node: NodeRow): Promise<string> {
  const { sql, now } = w;
  return (await sql.transaction(async (tx) => {
    assertNotTopLevel(node, 'deleted');
    const trashFolder = (await getTopLevel(tx, node.owner_uuid, 'trash'));
    if (!trashFolder) throw new Error(`owner ${node.owner_uuid} has no trash folder`);
    const name = (await freeName(tx, trashFolder.uuid, node.name, node.type));
    const fromUuid = node.parent_uuid as string;
    (await tx.run('UPDATE nodes SET parent_uuid = ?, name = ?, trashed_from = ?, trashed_name = ? WHERE uuid = ?', [trashFolder.uuid,
      name,
      fromUuid,
      node.name,
      node.uuid]));
    (await touch(tx, fromUuid, now));
    (await touch(tx, trashFolder.uuid, now));
    if (node.type === 'Dir') (await touch(tx, node.uuid, now));
    return name;
  }));
}

/**
 * DELETE inside trash: removes `node`, its subtree, every revision and every star for good,
 * releases the blob references and frees the owner's usage. Returns the content hash of every blob
 * no longer referenced; the caller removes those files after this returns (never before the
 * commit, or a rollback would leave rows pointing at nothing).
 */
export async function purge(w: TreeWrite, node: NodeRow): Promise<string[]> {
  const { sql, now } = w;
  return (await sql.transaction(async (tx) => {
    assertNotTopLevel(node, 'deleted');
    const revisions = (await tx.all(`${SUBTREE} SELECT r.blob_hash AS hash, r.size FROM revisions r JOIN sub ON r.node_uuid = sub.uuid`, [node.uuid])) as Array<{ hash: string; size: number }>;
    // Revisions and stars go with their nodes (ON DELETE CASCADE); one statement, so the
    // parent references inside the subtree are checked only once it is all gone.
    (await tx.run(`${SUBTREE} DELETE FROM nodes WHERE uuid IN (SELECT uuid FROM sub)`, [node.uuid]));
    const unreferenced = new Set<string>();
    let freedBytes = 0;
    for (const revision of revisions) {
      freedBytes += revision.size;
      if ((await releaseBlobRef(tx, revision.hash))) unreferenced.add(revision.hash);
    }
    (await adjustUsage(tx, node.owner_type, node.owner_uuid, -freedBytes));
    if (node.parent_uuid !== null) (await touch(tx, node.parent_uuid, now));
    return [...unreferenced];
  }));
}

/** Adds or removes the caller's star; starring twice or unstarring an unstarred node changes nothing. */
export async function setStarred(w: TreeWrite, node: NodeRow, starred: boolean): Promise<void> {
  const { sql, now, callerUuid } = w;
  if (starred) {
    // The favorites folder lists starred nodes; a starred top-level folder would list itself.
    assertNotTopLevel(node, 'starred');
    (await sql.run('INSERT INTO stars (user_uuid, node_uuid, created) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [callerUuid, node.uuid, now]));
  } else {
    (await sql.run('DELETE FROM stars WHERE user_uuid = ? AND node_uuid = ?', [callerUuid, node.uuid]));
  }
}

/** A folder entry as dirlist needs it, with the caller's star. */
export interface ListedNode {
  uuid: string;
  owner_uuid: string;
  top_kind: NodeRow['top_kind'];
  name: string;
  type: 'Dir' | 'File';
  updated: number;
  revision: number | null;
  size: number;
  is_starred: boolean;
}

type ListedRow = Omit<ListedNode, 'is_starred'>;
const LISTED_COLUMNS = 'n.uuid, n.owner_uuid, n.top_kind, n.name, n.type, n.updated, n.revision, n.size';

/**
 * The children of `folderUuid`, folders first, then by name in byte order (SQLite's BINARY
 * collation compares UTF-8 bytes). Two queries whatever the size: the rows, then the caller's
 * stars among them, so a folder of 10,000 entries costs no more round trips than one of ten.
 */
export async function listChildrenWithStars(sql: Sql, folderUuid: string, callerUuid: string): Promise<ListedNode[]> {
  const rows = (await sql.all(`SELECT ${LISTED_COLUMNS} FROM nodes n WHERE n.parent_uuid = ? ORDER BY n.type = 'File', n.name`, [folderUuid])) as ListedRow[];
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
