/**
 * What the tree remembers about deletions, read and written for the trash and revision extensions
 * (docs/extensions.md "Trash and revisions from a client"): where a node in trash came from
 * (`trashed_from`, `trashed_name`, `trashed_at`, set by moveNodeToTrash), and the "delete for
 * good" mark of a folder (`skip_trash`, migration 022). No rules: ops/trash.ts decides.
 */
import type { Sql } from './sql.js';
import { ancestry, getNode, SUBTREE, type NodeRow } from './nodes.js';

/** Where a direct child of a trash folder came from. */
export interface TrashedRow {
  uuid: string;
  trashed_from: string | null;
  trashed_name: string | null;
  trashed_at: number | null;
}

/** The deletion facts of every child of the trash folder `trashUuid` (one query). */
export function trashedChildren(sql: Sql, trashUuid: string): Promise<TrashedRow[]> {
  return sql.all<TrashedRow>('SELECT uuid, trashed_from, trashed_name, trashed_at FROM nodes WHERE parent_uuid = ?', [trashUuid]);
}

export async function trashedRow(sql: Sql, uuid: string): Promise<TrashedRow | undefined> {
  return sql.get<TrashedRow>('SELECT uuid, trashed_from, trashed_name, trashed_at FROM nodes WHERE uuid = ?', [uuid]);
}

/** Where a deleted node's folder is, as names from its top-level folder (`["home", "docs"]`). */
export interface Origin {
  /** The names from the top-level folder down to the folder, as it was when the node was deleted. */
  names: string[];
  /** The folder itself when it still exists outside trash: where a restore puts the node back. */
  folder: NodeRow | undefined;
  /** Who owns the tree it lies in now (a folder may have moved to another owner since). */
  ownerUuid: string;
}

/**
 * The folder a node was deleted from, by its current place, or (when that folder was deleted
 * later and lies in trash itself) by where that folder came from, and so on: the location the
 * user saw. Undefined when the folder is gone for good. At most `maxHops` deletions are followed
 * (each one a walk up the tree), so a pathological chain costs bounded work.
 */
export async function originOf(sql: Sql, folderUuid: string | null, maxHops = 32): Promise<Origin | undefined> {
  let uuid = folderUuid;
  let below: string[] = [];
  let folder: NodeRow | undefined;
  for (let hop = 0; hop < maxHops && uuid !== null; hop++) {
    const node = await getNode(sql, uuid);
    if (!node) return undefined;
    const chain = await ancestry(sql, node);
    const top = chain[0];
    if (hop === 0 && top?.top_kind !== 'trash') folder = node;
    if (top?.top_kind !== 'trash') return { names: [...chain.map((n) => n.name), ...below], folder, ownerUuid: node.owner_uuid };
    // chain[1] lies directly in trash: it knows where it came from and its name there.
    const deleted = chain[1];
    if (!deleted) return undefined;
    const facts = await trashedRow(sql, deleted.uuid);
    below = [facts?.trashed_name ?? deleted.name, ...chain.slice(2).map((n) => n.name), ...below];
    uuid = facts?.trashed_from ?? null;
  }
  return undefined;
}

/** Sets or clears a folder's "delete for good" mark. */
export async function setSkipTrash(sql: Sql, uuid: string, on: boolean): Promise<void> {
  await sql.run('UPDATE nodes SET skip_trash = ? WHERE uuid = ?', [on ? 1 : 0, uuid]);
}

/** Clears the mark of `nodeUuid` and of every folder below it. */
export async function clearSkipTrashIn(sql: Sql, nodeUuid: string): Promise<void> {
  await sql.run(`${SUBTREE} UPDATE nodes SET skip_trash = 0 WHERE skip_trash = 1 AND uuid IN (SELECT uuid FROM sub)`, [nodeUuid]);
}

/** Clears the mark of every folder `ownerUuid` owns. */
export async function clearSkipTrashOf(sql: Sql, ownerUuid: string): Promise<void> {
  await sql.run('UPDATE nodes SET skip_trash = 0 WHERE owner_uuid = ? AND skip_trash = 1', [ownerUuid]);
}

/** Whether the folder itself carries the mark. */
export async function hasSkipTrash(sql: Sql, uuid: string): Promise<boolean> {
  const row = await sql.get<{ skip_trash: number }>('SELECT skip_trash FROM nodes WHERE uuid = ?', [uuid]);
  return row !== undefined && Number(row.skip_trash) === 1;
}

/** Whether a folder above `node` (its parent up to its top-level folder) carries the mark. */
export async function deletesSkipTrash(sql: Sql, node: Pick<NodeRow, 'parent_uuid'>): Promise<boolean> {
  if (node.parent_uuid === null) return false;
  const row = await sql.get(
    `WITH RECURSIVE up(uuid, parent, mark) AS (
       SELECT uuid, parent_uuid, skip_trash FROM nodes WHERE uuid = ?
       UNION ALL
       SELECT n.uuid, n.parent_uuid, n.skip_trash FROM nodes n JOIN up ON n.uuid = up.parent
     )
     SELECT 1 AS marked FROM up WHERE mark = 1 LIMIT 1`,
    [node.parent_uuid],
  );
  return row !== undefined;
}

/** Moves a node out of trash into `parentUuid` as `name` in one statement (the names never clash midway), forgetting its origin. */
export async function restoreNode(sql: Sql, uuid: string, parentUuid: string, name: string): Promise<void> {
  await sql.run('UPDATE nodes SET parent_uuid = ?, name = ?, trashed_from = NULL, trashed_name = NULL, trashed_at = NULL WHERE uuid = ?', [parentUuid, name, uuid]);
}
