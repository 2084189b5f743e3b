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
import type { Db } from './dialects/sqlite-open.js';
import { addBlobRef, adjustUsage, assertRoom, releaseBlobRef } from './blobs.js';
import { getChildByName, getTopLevel, isSelfOrDescendant, outsideTrash, topKindOf, touch, VIRTUAL_KINDS, type NodeRow } from './nodes.js';
import { conflict, forbidden } from '../envelope.js';

/** Who changes the tree, and when. */
export interface TreeWrite {
  db: Db;
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
function assertWritableFolder(db: Db, target: NodeRow): void {
  if (target.type !== 'Dir') throw conflict('the target is not a folder', 'not_a_folder');
  const top = topKindOf(db, target);
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
function subtreeBytes(db: Db, nodeUuid: string): number {
  const row = db.prepare(`${SUBTREE} SELECT COALESCE(SUM(r.size), 0) AS bytes FROM revisions r JOIN sub ON r.node_uuid = sub.uuid`).get(nodeUuid) as {
    bytes: number;
  };
  return row.bytes;
}

/**
 * Gives `node` with its subtree to another owner: every node changes owner, and the bytes of
 * every revision move from one owner's usage to the other's. The receiver's quota is checked
 * first (507, nothing changed). Run inside the caller's transaction.
 */
function giveToOwner(db: Db, node: NodeRow, receiver: Pick<NodeRow, 'owner_type' | 'owner_uuid'>): void {
  const bytes = subtreeBytes(db, node.uuid);
  assertRoom(db, receiver, bytes);
  db.prepare(`${SUBTREE} UPDATE nodes SET owner_uuid = ?, owner_type = ? WHERE uuid IN (SELECT uuid FROM sub)`).run(
    node.uuid,
    receiver.owner_uuid,
    receiver.owner_type,
  );
  adjustUsage(db, node.owner_type, node.owner_uuid, -bytes);
  adjustUsage(db, receiver.owner_type, receiver.owner_uuid, bytes);
}

function assertNameFree(db: Db, folderUuid: string, name: string): void {
  if (getChildByName(db, folderUuid, name)) throw conflict(`"${name}" exists in the target folder`);
}

export function isInTrash(db: Db, node: NodeRow): boolean {
  return topKindOf(db, node) === 'trash';
}

/** Creates folder `name` in `parent`; returns the new row. */
export function createFolder(w: TreeWrite, parent: NodeRow, name: string): NodeRow {
  const { db, now } = w;
  return db.transaction(() => {
    assertWritableFolder(db, parent);
    assertNameFree(db, parent.uuid, name);
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
    db.prepare(
      `INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, name, type, created, updated)
       VALUES (?, ?, ?, ?, ?, 'Dir', ?, ?)`,
    ).run(row.uuid, row.owner_uuid, row.owner_type, row.parent_uuid, row.name, now, now);
    touch(db, parent.uuid, now);
    return row;
  })();
}

/** Renames `node` in place. Renaming to its current name changes nothing. */
export function rename(w: TreeWrite, node: NodeRow, newName: string): void {
  const { db, now } = w;
  db.transaction(() => {
    assertNotTopLevel(node, 'renamed');
    if (node.name === newName) return;
    const parentUuid = node.parent_uuid as string;
    assertNameFree(db, parentUuid, newName);
    db.prepare('UPDATE nodes SET name = ? WHERE uuid = ?').run(newName, node.uuid);
    touch(db, parentUuid, now);
    if (node.type === 'Dir') touch(db, node.uuid, now);
  })();
}

/**
 * Moves `node` (with its subtree) into `target`. Out of trash this is the restore: the node
 * forgets where it was deleted from. Moving into the folder it is in changes nothing. Into
 * another owner's folder (a user's and a group's tree, either way, or two groups) the subtree
 * changes owner and its bytes move to the receiver's usage, within the receiver's quota (507).
 */
export function moveInto(w: TreeWrite, node: NodeRow, target: NodeRow): void {
  const { db, now } = w;
  db.transaction(() => {
    assertNotTopLevel(node, 'moved');
    assertWritableFolder(db, target);
    if (isSelfOrDescendant(db, node.uuid, target.uuid)) {
      throw conflict('a folder cannot be moved into itself or its descendants', 'move_into_self');
    }
    const fromUuid = node.parent_uuid as string;
    if (fromUuid === target.uuid) return;
    assertNameFree(db, target.uuid, node.name);
    if (node.owner_uuid !== target.owner_uuid) giveToOwner(db, node, target);
    db.prepare('UPDATE nodes SET parent_uuid = ?, trashed_from = NULL, trashed_name = NULL WHERE uuid = ?').run(target.uuid, node.uuid);
    touch(db, fromUuid, now);
    touch(db, target.uuid, now);
    if (node.type === 'Dir') touch(db, node.uuid, now);
  })();
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
export function latestSubtree(db: Db, nodeUuid: string): TreeEntry[] {
  const rows = db
    .prepare(
      `WITH RECURSIVE sub(uuid, depth) AS (
         SELECT ?, 0
         UNION ALL
         SELECT n.uuid, sub.depth + 1 FROM nodes n JOIN sub ON n.parent_uuid = sub.uuid
       )
       SELECT n.uuid, n.parent_uuid, n.name, n.type, r.blob_hash, r.size AS blob_size
       FROM sub JOIN nodes n ON n.uuid = sub.uuid
       LEFT JOIN revisions r ON r.node_uuid = n.uuid AND r.revision = n.revision
       ORDER BY sub.depth`,
    )
    .all(nodeUuid) as Array<{ uuid: string; parent_uuid: string | null; name: string; type: 'Dir' | 'File'; blob_hash: string | null; blob_size: number | null }>;
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
export function addEntryRefs(db: Db, entries: readonly TreeEntry[]): void {
  const refsByHash = new Map<string, { sizeBytes: number; count: number }>();
  for (const entry of entries) {
    if (entry.blobHash === null) continue;
    const refs = refsByHash.get(entry.blobHash);
    if (refs) refs.count += 1;
    else refsByHash.set(entry.blobHash, { sizeBytes: entry.size, count: 1 });
  }
  for (const [hash, refs] of refsByHash) addBlobRef(db, hash, refs.sizeBytes, refs.count);
}

/**
 * Creates `entries` as new nodes of `target`'s owner below `target`, the root named `rootName`,
 * each file at revision 1. Adds no blob reference and changes no usage: the caller does (a copy
 * adds references, an accepted share hands over the snapshot's). Returns the root's UUID.
 */
export function insertTree(w: TreeWrite, entries: readonly TreeEntry[], target: NodeRow, rootName: string): string {
  const { db, now, callerUuid } = w;
  const insertNode = db.prepare(
    `INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, name, type, created, updated, revision, size)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertRevision = db.prepare(
    'INSERT INTO revisions (node_uuid, revision, blob_hash, size, created, uploader_uuid) VALUES (?, 1, ?, ?, ?, ?)',
  );
  const newUuidOf = new Map<string | number, string>();
  for (const [index, entry] of entries.entries()) {
    const uuid = randomUUID();
    newUuidOf.set(entry.key, uuid);
    const parentUuid = index === 0 ? target.uuid : entry.parentKey === null ? undefined : newUuidOf.get(entry.parentKey);
    if (parentUuid === undefined) throw new Error(`copy of ${entry.key} reached before its parent`);
    const isFile = entry.type === 'File';
    const name = index === 0 ? rootName : entry.name;
    insertNode.run(uuid, target.owner_uuid, target.owner_type, parentUuid, name, entry.type, now, now, isFile ? 1 : null, isFile ? entry.size : 0);
    if (isFile) insertRevision.run(uuid, entry.blobHash, entry.size, now, callerUuid);
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
export function copyInto(w: TreeWrite, node: NodeRow, target: NodeRow): string {
  const { db, now } = w;
  return db.transaction(() => {
    assertNotTopLevel(node, 'copied');
    assertWritableFolder(db, target);
    if (isSelfOrDescendant(db, node.uuid, target.uuid)) {
      throw conflict('a folder cannot be copied into itself or its descendants', 'move_into_self');
    }
    assertNameFree(db, target.uuid, node.name);
    const entries = latestSubtree(db, node.uuid);
    const totalBytes = entriesBytes(entries);
    assertRoom(db, target, totalBytes);
    const copyUuid = insertTree(w, entries, target, node.name);
    addEntryRefs(db, entries);
    adjustUsage(db, target.owner_type, target.owner_uuid, totalBytes);
    touch(db, target.uuid, now);
    return copyUuid;
  })();
}

/** `name` if `folder` has no entry of that name, else the first free `name (n)` (numberedName). */
export function freeName(db: Db, folderUuid: string, name: string, type: 'Dir' | 'File'): string {
  let candidate = name;
  for (let n = 2; getChildByName(db, folderUuid, candidate); n += 1) candidate = numberedName(name, type, n);
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
export function trash(w: TreeWrite, node: NodeRow): string {
  const { db, now } = w;
  return db.transaction(() => {
    assertNotTopLevel(node, 'deleted');
    const trashFolder = getTopLevel(db, node.owner_uuid, 'trash');
    if (!trashFolder) throw new Error(`owner ${node.owner_uuid} has no trash folder`);
    const name = freeName(db, trashFolder.uuid, node.name, node.type);
    const fromUuid = node.parent_uuid as string;
    db.prepare('UPDATE nodes SET parent_uuid = ?, name = ?, trashed_from = ?, trashed_name = ? WHERE uuid = ?').run(
      trashFolder.uuid,
      name,
      fromUuid,
      node.name,
      node.uuid,
    );
    touch(db, fromUuid, now);
    touch(db, trashFolder.uuid, now);
    if (node.type === 'Dir') touch(db, node.uuid, now);
    return name;
  })();
}

/**
 * DELETE inside trash: removes `node`, its subtree, every revision and every star for good,
 * releases the blob references and frees the owner's usage. Returns the content hash of every blob
 * no longer referenced; the caller removes those files after this returns (never before the
 * commit, or a rollback would leave rows pointing at nothing).
 */
export function purge(w: TreeWrite, node: NodeRow): string[] {
  const { db, now } = w;
  return db.transaction(() => {
    assertNotTopLevel(node, 'deleted');
    const revisions = db
      .prepare(`${SUBTREE} SELECT r.blob_hash AS hash, r.size FROM revisions r JOIN sub ON r.node_uuid = sub.uuid`)
      .all(node.uuid) as Array<{ hash: string; size: number }>;
    // Revisions and stars go with their nodes (ON DELETE CASCADE); one statement, so the
    // parent references inside the subtree are checked only once it is all gone.
    db.prepare(`${SUBTREE} DELETE FROM nodes WHERE uuid IN (SELECT uuid FROM sub)`).run(node.uuid);
    const unreferenced = new Set<string>();
    let freedBytes = 0;
    for (const revision of revisions) {
      freedBytes += revision.size;
      if (releaseBlobRef(db, revision.hash)) unreferenced.add(revision.hash);
    }
    adjustUsage(db, node.owner_type, node.owner_uuid, -freedBytes);
    if (node.parent_uuid !== null) touch(db, node.parent_uuid, now);
    return [...unreferenced];
  })();
}

/** Adds or removes the caller's star; starring twice or unstarring an unstarred node changes nothing. */
export function setStarred(w: TreeWrite, node: NodeRow, starred: boolean): void {
  const { db, now, callerUuid } = w;
  if (starred) {
    // The favorites folder lists starred nodes; a starred top-level folder would list itself.
    assertNotTopLevel(node, 'starred');
    db.prepare('INSERT OR IGNORE INTO stars (user_uuid, node_uuid, created) VALUES (?, ?, ?)').run(callerUuid, node.uuid, now);
  } else {
    db.prepare('DELETE FROM stars WHERE user_uuid = ? AND node_uuid = ?').run(callerUuid, node.uuid);
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
export function listChildrenWithStars(db: Db, folderUuid: string, callerUuid: string): ListedNode[] {
  const rows = db
    .prepare(`SELECT ${LISTED_COLUMNS} FROM nodes n WHERE n.parent_uuid = ? ORDER BY n.type = 'File', n.name`)
    .all(folderUuid) as ListedRow[];
  const starred = new Set(
    (
      db
        .prepare('SELECT s.node_uuid FROM stars s JOIN nodes n ON n.uuid = s.node_uuid WHERE s.user_uuid = ? AND n.parent_uuid = ?')
        .all(callerUuid, folderUuid) as Array<{ node_uuid: string }>
    ).map((r) => r.node_uuid),
  );
  // Filled in place: no second object per entry.
  const listed = rows as ListedNode[];
  for (const row of listed) row.is_starred = starred.has(row.uuid);
  return listed;
}

/** Which of `nodeUuids` the caller starred (one query). */
export function starredAmong(db: Db, callerUuid: string, nodeUuids: readonly string[]): Set<string> {
  if (nodeUuids.length === 0) return new Set();
  const rows = db
    .prepare('SELECT node_uuid FROM stars WHERE user_uuid = ? AND node_uuid IN (SELECT value FROM json_each(?))')
    .all(callerUuid, JSON.stringify(nodeUuids)) as Array<{ node_uuid: string }>;
  return new Set(rows.map((r) => r.node_uuid));
}

/**
 * What `favorites` of `ownerUuid` lists: the caller's starred nodes of that owner, except those
 * in trash (a deleted node is not a favorite until it is restored; its star is kept for then).
 */
export function listFavorites(db: Db, ownerUuid: string, callerUuid: string): NodeRow[] {
  return outsideTrash(db, 'SELECT s.node_uuid FROM stars s JOIN nodes o ON o.uuid = s.node_uuid WHERE s.user_uuid = ? AND o.owner_uuid = ?', callerUuid, ownerUuid);
}
