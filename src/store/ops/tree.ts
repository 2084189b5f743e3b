/**
 * The rules of the tree: create folder, rename, move, copy, move to trash and purge from trash
 * (docs/store-semantics.md, "Names" and "Nodes"), over the node rows of storage/nodes.ts. Each
 * runs in one transaction (a savepoint of the caller's when `w.sql` is a transaction's handle)
 * and either changes everything it should or nothing. Callers pass nodes that resolveNode
 * (access.ts) already granted; this module decides only what the tree allows (top-level folders,
 * virtual folders and trash, names, quota), never who may ask. It never touches blob files:
 * purge returns the blobs that lost their last reference, and the caller unlinks them after the
 * commit.
 */
import { randomUUID } from 'node:crypto';
import type { Sql, TransactionOptions } from '../storage/sql.js';
import { releaseBlobRef } from '../storage/blob-refs.js';
import { addEntryRefs, adjustUsage, remainingBytes } from '../storage/revisions.js';
import {
  addStar,
  deleteSubtree,
  entriesBytes,
  getChildByName,
  getTopLevel,
  insertNode,
  insertTree,
  isSelfOrDescendant,
  latestSubtree,
  moveNodeToTrash,
  removeStar,
  renameNode,
  reparentNode,
  setSubtreeOwner,
  subtreeBytes,
  subtreeRevisions,
  topKindOf,
  touch,
  VIRTUAL_KINDS,
  type NodeRow,
  type OwnerType,
} from '../storage/nodes.js';
import { conflict, forbidden, quotaExceeded } from '../envelope.js';
import { clearSkipTrashIn, restoreNode } from '../storage/trash.js';
import { bumpFolder, propagateChange, treeBytesOf } from '../storage/tree-changes.js';

/** Who changes the tree, and when. */
export interface TreeWrite {
  sql: Sql;
  now: number;
  callerUuid: string;
}

const MAX_NAME_BYTES = 255;

/**
 * One user's writes run one after the other on PostgreSQL (sql.ts TransactionOptions): a sync
 * client's parallel uploads all change that user's usage row and would otherwise spend most
 * attempts on serialization failures. Keyed by who acts, which is who changes their own tree in
 * the common case; writes into a group by several users still meet SERIALIZABLE's retries.
 */
export function writesOf(callerUuid: string): TransactionOptions {
  return { serializeOn: [`writer:${callerUuid}`] };
}

/** Refuses (507) `bytes` more for an owner they would take over its quota. */
export async function assertRoom(sql: Sql, owner: { owner_type: OwnerType; owner_uuid: string }, bytes: number): Promise<void> {
  if (bytes > (await remainingBytes(sql, owner.owner_type, owner.owner_uuid))) throw quotaExceeded();
}

function assertNotTopLevel(node: NodeRow, verb: string): void {
  if (node.top_kind !== null) throw forbidden(`a top-level folder cannot be ${verb}`, 'top_level_immutable');
}

/**
 * A folder new entries may enter by new_dir, copy_to or move_to. Trash is refused like the
 * virtual folders: DELETE is the only way in, so every node there knows where it came from.
 */
async function assertWritableFolder(sql: Sql, target: NodeRow): Promise<void> {
  if (target.type !== 'Dir') throw conflict('the target is not a folder', 'not_a_folder');
  const top = await topKindOf(sql, target);
  if (top !== null && VIRTUAL_KINDS.has(top)) {
    throw forbidden(`nothing can be placed in ${top}`, 'virtual_folder');
  }
  if (top === 'trash') throw forbidden('nothing can be placed in trash; delete the node instead', 'virtual_folder');
}

/**
 * Gives `node` with its subtree to another owner: every node changes owner, and the bytes of
 * every revision move from one owner's usage to the other's. The receiver's quota is checked
 * first (507, nothing changed). Every "delete for good" mark in the subtree is cleared: whether
 * deletes skip an owner's trash is that owner's decision (access.ts mayActAsOwner), and a marked
 * folder moved into someone's tree would otherwise make their own deletes there final without
 * their knowing (issue 29). Run inside the caller's transaction.
 */
async function giveToOwner(sql: Sql, node: NodeRow, receiver: Pick<NodeRow, 'owner_type' | 'owner_uuid'>): Promise<void> {
  const bytes = await subtreeBytes(sql, node.uuid);
  await assertRoom(sql, receiver, bytes);
  await setSubtreeOwner(sql, node.uuid, receiver.owner_type, receiver.owner_uuid);
  await clearSkipTrashIn(sql, node.uuid);
  await adjustUsage(sql, node.owner_type, node.owner_uuid, -bytes);
  await adjustUsage(sql, receiver.owner_type, receiver.owner_uuid, bytes);
}

/**
 * After `node` moved from folder `fromUuid` into `toUuid` (a move, a restore, a delete into
 * trash): both folders changed, and both chains above them, by what the node holds; a folder
 * moved gets a new version of its own (its ETag moves, as its path did).
 */
async function movedBetween(sql: Sql, node: NodeRow, fromUuid: string, toUuid: string, now: number): Promise<void> {
  const bytes = await treeBytesOf(sql, node);
  await touch(sql, fromUuid, now);
  await touch(sql, toUuid, now);
  await propagateChange(sql, fromUuid, -bytes);
  await propagateChange(sql, toUuid, bytes);
  if (node.type === 'Dir') await touchFolder(sql, node.uuid, now);
}

/** A folder's own change (renamed, moved): its time and its own tree version. */
async function touchFolder(sql: Sql, uuid: string, now: number): Promise<void> {
  await touch(sql, uuid, now);
  await bumpFolder(sql, uuid);
}

async function assertNameFree(sql: Sql, folderUuid: string, name: string): Promise<void> {
  if (await getChildByName(sql, folderUuid, name)) throw conflict(`"${name}" exists in the target folder`);
}

export async function isInTrash(sql: Sql, node: NodeRow): Promise<boolean> {
  return (await topKindOf(sql, node)) === 'trash';
}

/** Creates folder `name` in `parent`; returns the new row. */
export async function createFolder(w: TreeWrite, parent: NodeRow, name: string): Promise<NodeRow> {
  const { sql, now } = w;
  return await sql.transaction(async (tx) => {
    await assertWritableFolder(tx, parent);
    await assertNameFree(tx, parent.uuid, name);
    const row: Omit<NodeRow, 'file_id'> = {
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
    const fileId = await insertNode(tx, row);
    await touch(tx, parent.uuid, now);
    await propagateChange(tx, parent.uuid, 0);
    return { ...row, file_id: fileId };
  }, writesOf(w.callerUuid));
}

/** Renames `node` in place. Renaming to its current name changes nothing. */
export async function rename(w: TreeWrite, node: NodeRow, newName: string): Promise<void> {
  const { sql, now } = w;
  await sql.transaction(async (tx) => {
    assertNotTopLevel(node, 'renamed');
    if (node.name === newName) return;
    const parentUuid = node.parent_uuid as string;
    await assertNameFree(tx, parentUuid, newName);
    await renameNode(tx, node.uuid, newName);
    await touch(tx, parentUuid, now);
    await propagateChange(tx, parentUuid, 0);
    if (node.type === 'Dir') await touchFolder(tx, node.uuid, now);
  }, writesOf(w.callerUuid));
}

/**
 * Moves `node` (with its subtree) into `target`. Out of trash this is the restore: the node
 * forgets where it was deleted from. Moving into the folder it is in changes nothing. Into
 * another owner's folder (a user's and a group's tree, either way, or two groups) the subtree
 * changes owner and its bytes move to the receiver's usage, within the receiver's quota (507).
 */
export async function moveInto(w: TreeWrite, node: NodeRow, target: NodeRow): Promise<void> {
  const { sql, now } = w;
  await sql.transaction(async (tx) => {
    assertNotTopLevel(node, 'moved');
    await assertWritableFolder(tx, target);
    if (await isSelfOrDescendant(tx, node.uuid, target.uuid)) {
      throw conflict('a folder cannot be moved into itself or its descendants', 'move_into_self');
    }
    const fromUuid = node.parent_uuid as string;
    if (fromUuid === target.uuid) return;
    await assertNameFree(tx, target.uuid, node.name);
    if (node.owner_uuid !== target.owner_uuid) await giveToOwner(tx, node, target);
    await reparentNode(tx, node.uuid, target.uuid);
    await movedBetween(tx, node, fromUuid, target.uuid, now);
  }, writesOf(w.callerUuid));
}

/**
 * The restore of a node lying directly in trash: it goes back into `target` (the folder it was
 * deleted from, or its owner's home when that is gone) as `name` (its name before the deletion,
 * numbered `name (2).ext` when taken there), forgetting where it was deleted from. Into another
 * owner's folder (the origin moved to a group since) its bytes move as for moveInto. Returns the
 * name it got.
 */
export async function restoreInto(w: TreeWrite, node: NodeRow, target: NodeRow, name: string): Promise<string> {
  const { sql, now } = w;
  return await sql.transaction(async (tx) => {
    await assertWritableFolder(tx, target);
    const placed = await freeName(tx, target.uuid, name, node.type);
    const fromUuid = node.parent_uuid as string;
    if (node.owner_uuid !== target.owner_uuid) await giveToOwner(tx, node, target);
    await restoreNode(tx, node.uuid, target.uuid, placed);
    await movedBetween(tx, node, fromUuid, target.uuid, now);
    return placed;
  }, writesOf(w.callerUuid));
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
  return await sql.transaction(async (tx) => {
    assertNotTopLevel(node, 'copied');
    await assertWritableFolder(tx, target);
    if (await isSelfOrDescendant(tx, node.uuid, target.uuid)) {
      throw conflict('a folder cannot be copied into itself or its descendants', 'move_into_self');
    }
    await assertNameFree(tx, target.uuid, node.name);
    const entries = await latestSubtree(tx, node.uuid);
    const totalBytes = entriesBytes(entries);
    await assertRoom(tx, target, totalBytes);
    const copyUuid = await insertTree(tx, entries, target, node.name, { now, uploaderUuid: w.callerUuid });
    await addEntryRefs(tx, entries);
    await adjustUsage(tx, target.owner_type, target.owner_uuid, totalBytes);
    await touch(tx, target.uuid, now);
    await propagateChange(tx, target.uuid, totalBytes);
    return copyUuid;
  }, writesOf(w.callerUuid));
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
  return await sql.transaction(async (tx) => {
    assertNotTopLevel(node, 'deleted');
    const trashFolder = await getTopLevel(tx, node.owner_uuid, 'trash');
    if (!trashFolder) throw new Error(`owner ${node.owner_uuid} has no trash folder`);
    const name = await freeName(tx, trashFolder.uuid, node.name, node.type);
    const fromUuid = node.parent_uuid as string;
    await moveNodeToTrash(tx, node, trashFolder.uuid, name, now);
    await movedBetween(tx, node, fromUuid, trashFolder.uuid, now);
    return name;
  }, writesOf(w.callerUuid));
}

/**
 * DELETE inside trash: removes `node`, its subtree, every revision and every star for good,
 * releases the blob references and frees the owner's usage. Returns the content hash of every blob
 * no longer referenced; the caller removes those files after this returns (never before the
 * commit, or a rollback would leave rows pointing at nothing).
 */
export async function purge(w: TreeWrite, node: NodeRow): Promise<string[]> {
  const { sql, now } = w;
  return await sql.transaction(async (tx) => {
    assertNotTopLevel(node, 'deleted');
    const revisions = await subtreeRevisions(tx, node.uuid);
    const treeBytes = await treeBytesOf(tx, node);
    await deleteSubtree(tx, node.uuid);
    const unreferenced = new Set<string>();
    let freedBytes = 0;
    for (const revision of revisions) {
      freedBytes += revision.size;
      if (await releaseBlobRef(tx, revision.hash)) unreferenced.add(revision.hash);
    }
    await adjustUsage(tx, node.owner_type, node.owner_uuid, -freedBytes);
    if (node.parent_uuid !== null) {
      await touch(tx, node.parent_uuid, now);
      await propagateChange(tx, node.parent_uuid, -treeBytes);
    }
    return [...unreferenced];
  }, writesOf(w.callerUuid));
}

/** Adds or removes the caller's star; starring twice or unstarring an unstarred node changes nothing. */
export async function setStarred(w: TreeWrite, node: NodeRow, starred: boolean): Promise<void> {
  const { sql, now, callerUuid } = w;
  if (starred) {
    // The favorites folder lists starred nodes; a starred top-level folder would list itself.
    assertNotTopLevel(node, 'starred');
    await addStar(sql, callerUuid, node.uuid, now);
  } else {
    await removeStar(sql, callerUuid, node.uuid);
  }
}

