/**
 * What happens to everything an owner (a user or a group) stores when the owner is deleted:
 * removed for good, or handed to a receiver. Runs inside the caller's transaction, which also
 * deletes the owner's row. Never touches blob files: purging returns the blobs that lost their
 * last reference, and the caller unlinks them after the commit.
 */
import type { Sql } from './sql.js';
import { adjustUsage, OWNER_TABLE, releaseBlobRef } from './blobs.js';
import type { OwnerType } from './nodes.js';

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
  (await sql.run('DELETE FROM nodes WHERE owner_uuid = ?', [owner.uuid]));
  const unreferenced = new Set<string>();
  for (const { hash } of hashes) if ((await releaseBlobRef(sql, hash))) unreferenced.add(hash);
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
  await sql.run('UPDATE nodes SET parent_uuid = ?, trashed_from = NULL, trashed_name = NULL WHERE parent_uuid = ?', [toParentUuid, fromParentUuid]);
}

/** Gives every node of `from` but its top-level folders to `to`, then deletes those folders (emptied first). */
export async function handOverNodes(sql: Sql, from: Owner, to: Owner): Promise<void> {
  await sql.run('UPDATE nodes SET owner_uuid = ?, owner_type = ? WHERE owner_uuid = ? AND top_kind IS NULL', [to.uuid, to.type, from.uuid]);
  await sql.run('DELETE FROM nodes WHERE owner_uuid = ?', [from.uuid]);
}
