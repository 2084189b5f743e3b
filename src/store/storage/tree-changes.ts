/**
 * Folder tree versions and recursive sizes (migration 026; docs/store-semantics.md "Tree
 * versions"). Every change below a folder inserts one `tree_changes` row for the folder it
 * happened in and one for each folder above it, up to the top-level folder, in the change's
 * transaction: a write costs one statement of depth rows, and no row is updated, so on
 * PostgreSQL no writer waits for another's row lock (the root's row locked until commit is the
 * propagation problem Nextcloud and oCIS know). A folder's tree version is its rows'
 * MAX(seq) with SUM(changes) (on PostgreSQL seqs are not committed in order, so MAX alone could
 * stay still while SUM(changes) moves); its recursive size is SUM(bytes). compactTreeChanges
 * merges a folder's old rows into one, changing neither.
 */
import { jsonValues } from './portable.js';
import type { Sql } from './sql.js';

/** `folder` and every folder above it: the recursive walk the statements below start with (first parameter). */
const UP = `up(uuid) AS (
    SELECT CAST(? AS TEXT)
    UNION ALL
    SELECT n.parent_uuid FROM nodes n JOIN up ON n.uuid = up.uuid WHERE n.parent_uuid IS NOT NULL
  )`;

/**
 * The CTEs of one change for PostgreSQL's single-statement uploads (revisions.ts, inside a WITH
 * RECURSIVE): `@folder` and every folder above it get a row of `bytes` (an SQL expression).
 */
export function propagateCte(bytes: string): string {
  return `up(uuid) AS (
    SELECT CAST(@folder AS TEXT)
    UNION ALL
    SELECT n.parent_uuid FROM nodes n JOIN up ON n.uuid = up.uuid WHERE n.parent_uuid IS NOT NULL
  ),
  tree AS (INSERT INTO tree_changes (folder_uuid, changes, bytes) SELECT uuid, 1, ${bytes} FROM up)`;
}

/**
 * Something changed in folder `folderUuid` (an entry added, removed, renamed, rewritten):
 * it and every folder above it get a new tree version, their recursive size moved by `bytes`.
 */
export async function propagateChange(sql: Sql, folderUuid: string, bytes: number): Promise<void> {
  await sql.run(`WITH RECURSIVE ${UP} INSERT INTO tree_changes (folder_uuid, changes, bytes) SELECT uuid, 1, ? FROM up`, [folderUuid, bytes]);
}

/** A new tree version of `folderUuid` alone (a folder renamed or moved: its own ETag moves, its size does not). */
export async function bumpFolder(sql: Sql, folderUuid: string): Promise<void> {
  await sql.run('INSERT INTO tree_changes (folder_uuid, changes, bytes) VALUES (?, 1, 0)', [folderUuid]);
}

/** The first row of a new folder: it holds `bytes` (a copied folder's content; 0 for a new one). */
export async function startFolder(sql: Sql, folderUuid: string, bytes: number): Promise<void> {
  await sql.run('INSERT INTO tree_changes (folder_uuid, changes, bytes) VALUES (?, 1, ?)', [folderUuid, bytes]);
}

/** What a node adds to its folder's recursive size: a file's latest revision, a folder's recursive size. */
export async function treeBytesOf(sql: Sql, node: { uuid: string; type: 'Dir' | 'File'; size: number }): Promise<number> {
  if (node.type === 'File') return Number(node.size);
  const row = await sql.get<{ bytes: number | string | null }>('SELECT SUM(bytes) AS bytes FROM tree_changes WHERE folder_uuid = ?', [node.uuid]);
  return Number(row?.bytes ?? 0);
}

/** A folder's tree version (an opaque token that changes with every change below it) and recursive size. */
export interface TreeState {
  etag: string;
  bytes: number;
}

/** The tree state of each of `folderUuids` that has rows (one query for any count). */
export async function treeStatesOf(sql: Sql, folderUuids: readonly string[]): Promise<Map<string, TreeState>> {
  const found = new Map<string, TreeState>();
  if (folderUuids.length === 0) return found;
  const rows = await sql.all<{ folder_uuid: string; seq: number | string; changes: number | string; bytes: number | string }>(
    `SELECT folder_uuid, MAX(seq) AS seq, SUM(changes) AS changes, SUM(bytes) AS bytes FROM tree_changes
     WHERE folder_uuid IN (${jsonValues(sql)}) GROUP BY folder_uuid`,
    [JSON.stringify(folderUuids)],
  );
  for (const row of rows) found.set(row.folder_uuid, { etag: `${Number(row.seq).toString(36)}.${Number(row.changes).toString(36)}`, bytes: Number(row.bytes) });
  return found;
}

/**
 * Merges the rows of folders that have more than `threshold` into one row each (MAX(seq),
 * SUM(changes), SUM(bytes)): what a folder's state reads stays short, and neither its version nor
 * its size changes. At most `limit` folders per call; returns how many were merged. Each folder
 * in its own transaction; rows another transaction has not committed yet are not seen, so they
 * stay as they are and count once they commit.
 */
export async function compactTreeChanges(sql: Sql, { threshold = 16, limit = 500 }: { threshold?: number; limit?: number } = {}): Promise<number> {
  const folders = await sql.all<{ folder_uuid: string }>('SELECT folder_uuid FROM tree_changes GROUP BY folder_uuid HAVING COUNT(*) > ? LIMIT ?', [threshold, limit]);
  for (const { folder_uuid: folder } of folders) {
    await sql.transaction(async (tx) => {
      const merged = await tx.get<{ seq: number | string | null; changes: number | string; bytes: number | string }>(
        'SELECT MAX(seq) AS seq, SUM(changes) AS changes, SUM(bytes) AS bytes FROM tree_changes WHERE folder_uuid = ?',
        [folder],
      );
      if (merged?.seq === null || merged?.seq === undefined) return;
      await tx.run('DELETE FROM tree_changes WHERE folder_uuid = ? AND seq <= ?', [folder, merged.seq]);
      await tx.run('INSERT INTO tree_changes (seq, folder_uuid, changes, bytes) VALUES (?, ?, ?, ?)', [merged.seq, folder, merged.changes, merged.bytes]);
    });
  }
  return folders.length;
}
