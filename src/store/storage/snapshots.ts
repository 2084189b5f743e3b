/**
 * Snapshots: the copy a share_copy takes of a subtree, without node rows (migration 009). Each
 * file entry holds one reference of its blob, so the bytes survive whatever happens to the
 * original, no blob is duplicated, and nobody's `disk_used` counts them while they wait.
 * Accepting hands the references to new nodes (materialise); rejecting, withdrawing and deleting
 * release them and return the blobs nobody refers to any more, for the caller to unlink after
 * its commit. Run inside the caller's transaction; who may do what is decided in ops/.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from './dialects/sqlite-open.js';
import { adjustUsage, assertRoom, releaseBlobRef } from './blobs.js';
import { touch, type NodeRow } from './nodes.js';
import { addEntryRefs, entriesBytes, freeName, insertTree, latestSubtree, type TreeEntry, type TreeWrite } from './tree.js';

export interface SnapshotRow {
  uuid: string;
  source_uuid: string | null;
  name: string;
  type: 'Dir' | 'File';
  bytes: number;
  created: number;
}

function insertSnapshot(db: Db, head: SnapshotRow, entries: readonly TreeEntry[]): void {
  db.prepare('INSERT INTO snapshots (uuid, source_uuid, name, type, bytes, created) VALUES (?, ?, ?, ?, ?, ?)').run(
    head.uuid,
    head.source_uuid,
    head.name,
    head.type,
    head.bytes,
    head.created,
  );
  const insert = db.prepare('INSERT INTO snapshot_entries (snapshot_uuid, id, parent_id, name, type, blob_hash, size) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const idOf = new Map<string | number, number>();
  for (const [id, entry] of entries.entries()) {
    idOf.set(entry.key, id);
    const parentId = entry.parentKey === null ? null : idOf.get(entry.parentKey);
    if (parentId === undefined) throw new Error(`snapshot entry ${entry.key} reached before its parent`);
    insert.run(head.uuid, id, parentId, entry.name, entry.type, entry.blobHash, entry.size);
  }
  addEntryRefs(db, entries);
}

/** Takes a snapshot of `node` and its subtree (each file's latest revision). */
export function takeSnapshot(db: Db, node: NodeRow, nowMs: number): SnapshotRow {
  const entries = latestSubtree(db, node.uuid);
  const head: SnapshotRow = { uuid: randomUUID(), source_uuid: node.uuid, name: node.name, type: node.type, bytes: entriesBytes(entries), created: nowMs };
  insertSnapshot(db, head, entries);
  return head;
}

export function getSnapshot(db: Db, uuid: string): SnapshotRow | undefined {
  return db.prepare('SELECT * FROM snapshots WHERE uuid = ?').get(uuid) as SnapshotRow | undefined;
}

function entriesOf(db: Db, uuid: string): TreeEntry[] {
  const rows = db
    .prepare('SELECT id, parent_id, name, type, blob_hash, size FROM snapshot_entries WHERE snapshot_uuid = ? ORDER BY id')
    .all(uuid) as Array<{ id: number; parent_id: number | null; name: string; type: 'Dir' | 'File'; blob_hash: string | null; size: number }>;
  return rows.map((r) => ({ key: r.id, parentKey: r.parent_id, name: r.name, type: r.type, blobHash: r.blob_hash, size: r.size }));
}

/** A second snapshot with the same content and references of its own (one per recipient). */
export function cloneSnapshot(db: Db, uuid: string, nowMs: number): SnapshotRow {
  const source = getSnapshot(db, uuid);
  if (!source) throw new Error(`no snapshot ${uuid}`);
  const head: SnapshotRow = { ...source, uuid: randomUUID(), created: nowMs };
  insertSnapshot(db, head, entriesOf(db, uuid));
  return head;
}

function deleteSnapshotRows(db: Db, uuid: string): void {
  db.prepare('DELETE FROM snapshot_entries WHERE snapshot_uuid = ?').run(uuid);
  db.prepare('DELETE FROM snapshots WHERE uuid = ?').run(uuid);
}

/**
 * Creates the snapshot as new nodes in `folder` (its owner's), the root under a free name
 * (`name (2)` on a clash, as trash numbers), each file at revision 1. The snapshot's blob
 * references become the revisions' and the snapshot goes. The bytes join the owner's usage,
 * within its quota (507, nothing changed). Returns the new root's UUID.
 */
export function materialiseSnapshot(w: TreeWrite, uuid: string, folder: NodeRow): string {
  const { db, now } = w;
  const head = getSnapshot(db, uuid);
  if (!head) throw new Error(`no snapshot ${uuid}`);
  assertRoom(db, folder, head.bytes);
  const rootUuid = insertTree(w, entriesOf(db, uuid), folder, freeName(db, folder.uuid, head.name, head.type));
  adjustUsage(db, folder.owner_type, folder.owner_uuid, head.bytes);
  touch(db, folder.uuid, now);
  deleteSnapshotRows(db, uuid);
  return rootUuid;
}

/** Drops the snapshot and its references; returns the hashes of blobs no row refers to any more. */
export function releaseSnapshot(db: Db, uuid: string): string[] {
  const hashes = db.prepare('SELECT blob_hash AS hash FROM snapshot_entries WHERE snapshot_uuid = ? AND blob_hash IS NOT NULL').all(uuid) as Array<{
    hash: string;
  }>;
  deleteSnapshotRows(db, uuid);
  const unreferenced = new Set<string>();
  for (const { hash } of hashes) if (releaseBlobRef(db, hash)) unreferenced.add(hash);
  return [...unreferenced];
}
