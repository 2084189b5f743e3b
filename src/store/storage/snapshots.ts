/**
 * Snapshots: the copy a share_copy takes of a subtree, without node rows (migration 009). Each
 * file entry holds one reference of its blob, so the bytes survive whatever happens to the
 * original, no blob is duplicated, and nobody's `disk_used` counts them while they wait.
 * Accepting hands the references to new nodes (materialise); rejecting, withdrawing and deleting
 * release them and return the blobs nobody refers to any more, for the caller to unlink after
 * its commit. Run inside the caller's transaction; who may do what is decided in ops/.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from './sql.js';
import { addEntryRefs, releaseBlobRef } from './blobs.js';
import { entriesBytes, latestSubtree, type NodeRow, type TreeEntry } from './nodes.js';

export interface SnapshotRow {
  uuid: string;
  source_uuid: string | null;
  name: string;
  type: 'Dir' | 'File';
  bytes: number;
  created: number;
}

async function insertSnapshot(sql: Sql, head: SnapshotRow, entries: readonly TreeEntry[]): Promise<void> {
  (await sql.run('INSERT INTO snapshots (uuid, source_uuid, name, type, bytes, created) VALUES (?, ?, ?, ?, ?, ?)', [head.uuid,
    head.source_uuid,
    head.name,
    head.type,
    head.bytes,
    head.created]));
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
  (await addEntryRefs(sql, entries));
}

/** Takes a snapshot of `node` and its subtree (each file's latest revision). */
export async function takeSnapshot(sql: Sql, node: NodeRow, nowMs: number): Promise<SnapshotRow> {
  const entries = (await latestSubtree(sql, node.uuid));
  const head: SnapshotRow = { uuid: randomUUID(), source_uuid: node.uuid, name: node.name, type: node.type, bytes: entriesBytes(entries), created: nowMs };
  (await insertSnapshot(sql, head, entries));
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
  const source = (await getSnapshot(sql, uuid));
  if (!source) throw new Error(`no snapshot ${uuid}`);
  const head: SnapshotRow = { ...source, uuid: randomUUID(), created: nowMs };
  (await insertSnapshot(sql, head, (await entriesOf(sql, uuid))));
  return head;
}

export async function deleteSnapshotRows(sql: Sql, uuid: string): Promise<void> {
  (await sql.run('DELETE FROM snapshot_entries WHERE snapshot_uuid = ?', [uuid]));
  (await sql.run('DELETE FROM snapshots WHERE uuid = ?', [uuid]));
}

/** Drops the snapshot and its references; returns the hashes of blobs no row refers to any more. */
export async function releaseSnapshot(sql: Sql, uuid: string): Promise<string[]> {
  const hashes = (await sql.all('SELECT blob_hash AS hash FROM snapshot_entries WHERE snapshot_uuid = ? AND blob_hash IS NOT NULL', [uuid])) as Array<{
    hash: string;
  }>;
  (await deleteSnapshotRows(sql, uuid));
  const unreferenced = new Set<string>();
  for (const { hash } of hashes) if ((await releaseBlobRef(sql, hash))) unreferenced.add(hash);
  return [...unreferenced];
}
