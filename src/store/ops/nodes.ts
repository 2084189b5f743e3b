/**
 * SPEC "Nodes" as operations: POST /api/nodes/{node_uuid} (new_dir, new_name, starred, copy_to,
 * move_to), DELETE, details, path, dirlist and myaccess. Every identifier, targets included,
 * goes through resolveNode, so a node the caller may not see answers 404 exactly like an unknown
 * one; a move or copy to another owner (a user's tree and a group's, or two groups) also passes
 * assertMayLeaveOwner. The tree rules live in db/tree.ts; this module validates and resolves.
 * HTTP routes (routes/nodes.ts) and the in-process client (local-client.ts) both call it.
 */
import type { StoreContext } from '../context.js';
import { assertMayLeaveOwner, permissionsOn, resolveNode, type Permission } from '../access.js';
import { ancestry, publicId, type NodeRow } from '../db/nodes.js';
import {
  copyInto,
  createFolder,
  isInTrash,
  listChildrenWithStars,
  listFavorites,
  moveInto,
  purge,
  rename,
  setStarred,
  trash,
  type ListedNode,
  type TreeWrite,
} from '../db/tree.js';
import { conflict, invalid } from '../envelope.js';
import { assertValidName } from '../names.js';
import type { AuthenticatedUser } from '../sessions.js';
import { parseNodeOperation, type DirEntry, type NodeDetails, type PathEntry } from '../schemas/nodes.js';
import { removeBlobFiles } from './blob-files.js';

function writeOf(ctx: StoreContext, caller: AuthenticatedUser): TreeWrite {
  return { db: ctx.db, now: ctx.clock.now(), callerUuid: caller.userUuid };
}

function toDirEntry(node: ListedNode, callerUuid: string): DirEntry {
  const isFile = node.type === 'File';
  const entry: DirEntry = {
    uuid: publicId(node, callerUuid),
    name: node.name,
    type: node.type,
    is_starred: node.is_starred,
    public_shares: 0,
    private_shares: 0,
    comment_count: 0,
    size: isFile ? node.size : 0,
    updated: node.updated,
  };
  if (isFile && node.revision !== null) entry.revision = node.revision;
  return entry;
}

/** The user's full name, or the group's name. */
function ownerFullname(ctx: StoreContext, node: NodeRow): string {
  const sql = node.owner_type === 'Group' ? 'SELECT name AS fullname FROM groups WHERE uuid = ?' : 'SELECT fullname FROM users WHERE uuid = ?';
  const row = ctx.db.prepare(sql).get(node.owner_uuid) as { fullname: string } | undefined;
  return row?.fullname ?? '';
}

/**
 * One POST /api/nodes/{id} operation. The body is validated before anything is resolved: a bad
 * body answers 400 whether or not the node exists, so validation never reveals existence.
 */
export async function nodeOperation(ctx: StoreContext, caller: AuthenticatedUser, id: string, body: unknown): Promise<void> {
  const parsed = parseNodeOperation(body);
  if (!parsed.ok) throw invalid(parsed.problem);
  const { db } = ctx;
  const operation = parsed.operation;
  switch (operation.op) {
    case 'newDir': {
      const name = assertValidName(operation.name);
      createFolder(writeOf(ctx, caller), resolveNode(db, caller, id, 'write'), name);
      return;
    }
    case 'rename': {
      const name = assertValidName(operation.name);
      rename(writeOf(ctx, caller), resolveNode(db, caller, id, 'write'), name);
      return;
    }
    case 'star':
      setStarred(writeOf(ctx, caller), resolveNode(db, caller, id, 'read'), operation.starred);
      return;
    case 'copyTo': {
      const source = resolveNode(db, caller, id, 'read');
      const target = resolveNode(db, caller, operation.target, 'write');
      assertMayLeaveOwner(db, caller, source, target, 'copy');
      copyInto(writeOf(ctx, caller), source, target);
      return;
    }
    case 'moveTo': {
      const source = resolveNode(db, caller, id, 'write');
      const target = resolveNode(db, caller, operation.target, 'write');
      assertMayLeaveOwner(db, caller, source, target, 'move');
      moveInto(writeOf(ctx, caller), source, target);
      return;
    }
  }
}

/** DELETE: into the owner's trash, or for good inside it (the freed blob files go after the commit). */
export async function deleteNode(ctx: StoreContext, caller: AuthenticatedUser, id: string): Promise<void> {
  const node = resolveNode(ctx.db, caller, id, 'delete');
  if (node.top_kind === null && isInTrash(ctx.db, node)) {
    const unreferenced = purge(writeOf(ctx, caller), node);
    await removeBlobFiles(ctx, unreferenced);
  } else {
    trash(writeOf(ctx, caller), node);
  }
}

export function nodeDetails(ctx: StoreContext, caller: AuthenticatedUser, id: string): NodeDetails {
  const node = resolveNode(ctx.db, caller, id, 'read');
  return {
    name: node.name,
    type: node.type,
    uuid: publicId(node, caller.userUuid),
    owner_type: node.owner_type,
    owner_uuid: node.owner_uuid,
    owner_fullname: ownerFullname(ctx, node),
    created: node.created,
    updated: node.updated,
  };
}

export function nodePath(ctx: StoreContext, caller: AuthenticatedUser, id: string): PathEntry[] {
  const node = resolveNode(ctx.db, caller, id, 'read');
  return ancestry(ctx.db, node).map((row) => ({ name: row.name, uuid: publicId(row, caller.userUuid) }));
}

/** dirlist: a folder's entries, or what a derived folder (favorites, the share folders) shows. */
export function listFolder(ctx: StoreContext, caller: AuthenticatedUser, id: string): DirEntry[] {
  const { db } = ctx;
  const folder = resolveNode(db, caller, id, 'read');
  if (folder.type !== 'Dir') throw conflict('the node is not a folder', 'not_a_folder');
  switch (folder.top_kind) {
    case 'favorites':
      return listFavorites(db, folder.owner_uuid, caller.userUuid)
        .filter((node) => permissionsOn(db, caller, node).includes('read'))
        .map((node) => toDirEntry({ ...node, is_starred: true }, caller.userUuid));
    case 'public_shares':
    case 'private_shares':
    case 'shared_with_you':
      // Sharing is a later issue (TODO(#8)); until then nothing is shared, so these are empty.
      return [];
    default:
      return listChildrenWithStars(db, folder.uuid, caller.userUuid).map((node) => toDirEntry(node, caller.userUuid));
  }
}

/** myaccess: what the caller may do with any node they see, even without `read`. */
export function myAccess(ctx: StoreContext, caller: AuthenticatedUser, id: string): Permission[] {
  return permissionsOn(ctx.db, caller, resolveNode(ctx.db, caller, id, 'visible'));
}
