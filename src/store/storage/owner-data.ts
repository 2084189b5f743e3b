/**
 * What happens to everything an owner (a user or a group) stores when the owner is deleted:
 * removed for good, or handed to a receiver. Runs inside the caller's transaction, which also
 * deletes the owner's row. Never touches blob files: purging returns the blobs that lost their
 * last reference, and the caller unlinks them after the commit.
 */
import type { Sql } from './sql.js';
import { adjustUsage, OWNER_TABLE, releaseBlobRef, remainingBytes } from './blobs.js';
import { getTopLevel, type OwnerType } from './nodes.js';
import { createFolder, freeName } from './tree.js';
import { quotaExceeded } from '../envelope.js';

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

/** A node name made from an owner's name: no `/` or NUL, at most 255 bytes, never empty. */
function folderNameFor(ownerName: string): string {
  let chars = Array.from(ownerName.replace(/[/\0]/g, '_').trim());
  while (Buffer.byteLength(chars.join(''), 'utf8') > 240) chars = chars.slice(0, -1);
  const name = chars.join('');
  return name === '' || name === '.' || name === '..' ? 'deleted owner' : name;
}

/**
 * Hands every node of `from` to `to`: a folder named after `from` (numbered when the name is
 * taken) appears in the receiver's home, holding one folder per top-level folder of `from` that
 * had content (`home`, `incoming`, `trash`), with that content inside. Nodes from trash forget
 * their origin. The bytes move from one usage to the other, within the receiver's quota (507,
 * nothing changed). The emptied top-level folders of `from` are removed. Returns the folder's name.
 */
export async function transferOwnerNodes(sql: Sql, from: Owner & { name: string }, to: Owner, nowMs: number): Promise<string> {
  const { bytes } = (await sql.get('SELECT COALESCE(SUM(r.size), 0) AS bytes FROM revisions r JOIN nodes n ON n.uuid = r.node_uuid WHERE n.owner_uuid = ?', [from.uuid])) as { bytes: number };
  if (bytes > (await remainingBytes(sql, to.type, to.uuid))) {
    throw quotaExceeded(`transfer_data_to: the receiver's disk_quota cannot hold the ${bytes} bytes to transfer`);
  }
  const home = (await getTopLevel(sql, to.uuid, 'home'));
  if (!home) throw new Error(`owner ${to.uuid} has no home folder`);
  const name = (await freeName(sql, home.uuid, folderNameFor(from.name), 'Dir'));

  const write = { sql, now: nowMs, callerUuid: to.uuid };
  const folder = (await createFolder(write, home, name));
  const tops = (await sql.all('SELECT * FROM nodes WHERE owner_uuid = ? AND top_kind IS NOT NULL ORDER BY top_kind', [from.uuid])) as Array<{
    uuid: string;
    top_kind: string;
  }>;
  for (const top of tops) {
    if ((await sql.get('SELECT 1 FROM nodes WHERE parent_uuid = ? LIMIT 1', [top.uuid])) === undefined) continue;
    const holder = (await createFolder(write, folder, top.top_kind));
    (await sql.run('UPDATE nodes SET parent_uuid = ?, trashed_from = NULL, trashed_name = NULL WHERE parent_uuid = ?', [holder.uuid, top.uuid]));
  }
  (await sql.run('UPDATE nodes SET owner_uuid = ?, owner_type = ? WHERE owner_uuid = ? AND top_kind IS NULL', [to.uuid, to.type, from.uuid]));
  (await sql.run('DELETE FROM nodes WHERE owner_uuid = ?', [from.uuid]));
  (await adjustUsage(sql, to.type, to.uuid, bytes));
  return name;
}
