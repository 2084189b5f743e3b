/**
 * docs/api.md "Nodes" as operations: POST /api/nodes/{node_uuid} (new_dir, new_name, starred, copy_to,
 * move_to, share_copy_with), DELETE, details, path, dirlist and myaccess. Every identifier, targets included,
 * goes through resolveNode, so a node the caller may not see answers 404 exactly like an unknown
 * one; a move or copy to another owner (a user's tree and a group's, or two groups) also passes
 * assertMayLeaveOwner. The tree rules live in ops/tree.ts, sharing in ops/share-copy.ts; this
 * module validates and resolves.
 * HTTP routes (routes/nodes.ts) and the in-process client (local-client.ts) both call it.
 */
import type { StoreContext } from '../context.js';
import type { Sql } from '../storage/sql.js';
import { filterInOrder } from '../in-order.js';
import { assertMayLeaveOwner, mayActAsOwner, permissionsOn, resolveNode, resolveNodeAccess, resolveNodeByFileId, type Permission } from '../access.js';
import {
  ancestry,
  publicId,
  type NodeRow,
  ownerName,
  listChildrenWithStars,
  listFavorites,
  starredAmong,
  checksumsOfNodes,
  type ListedNode,
} from '../storage/nodes.js';
import { nodesSharedWith, ownerNodesWithShares, shareCountsIn, shareCountsOf, type ShareCounts } from '../storage/shares.js';
import { copyInto, createFolder, isInTrash, moveInto, purge, rename, setStarred, trash, writesOf, type TreeWrite } from './tree.js';
import { conflict, invalid } from '../envelope.js';
import { assertValidName } from '../names.js';
import { isMacSideEntry } from '../../common/side-files.js';
import type { AuthenticatedUser } from '../sessions.js';
import { parseNodeOperation, publishedChecksums, type DirEntry, type NodeDetails, type PathEntry } from '../schemas/nodes.js';
import { removeBlobFiles } from './blob-files.js';
import { shareCopyWith } from './share-copy.js';
import { skipsTrash, trashFactsOf } from './trash.js';
import { deletesSkipTrash } from '../storage/trash.js';
import { treeStatesOf } from '../storage/tree-changes.js';

function writeOf(ctx: StoreContext, caller: AuthenticatedUser, tx: Sql): TreeWrite {
  return { sql: tx, now: ctx.clock.now(), callerUuid: caller.userUuid };
}

const NO_SHARES: ShareCounts = { publicShares: 0, privateShares: 0 };

function toDirEntry(node: ListedNode, callerUuid: string, counts: Map<string, ShareCounts>): DirEntry {
  const isFile = node.type === 'File';
  const shares = counts.get(node.uuid) ?? NO_SHARES;
  const entry: DirEntry = {
    uuid: publicId(node, callerUuid),
    name: node.name,
    type: node.type,
    is_starred: node.is_starred,
    public_shares: shares.publicShares,
    private_shares: shares.privateShares,
    comment_count: 0,
    size: isFile ? node.size : 0,
    updated: node.updated,
    file_id: node.file_id,
  };
  if (isFile && node.revision !== null) entry.revision = node.revision;
  const checksums = isFile ? publishedChecksums(node.sha1, node.md5) : undefined;
  if (checksums) entry.checksums = checksums;
  return entry;
}

/** Puts each folder's tree version and recursive size on its entry (one query for the whole listing; none without folders). */
async function withTreeStates(sql: Sql, nodes: ReadonlyArray<Pick<NodeRow, 'uuid' | 'type'>>, entries: DirEntry[]): Promise<DirEntry[]> {
  const folders = nodes.filter((node) => node.type === 'Dir').map((node) => node.uuid);
  if (folders.length === 0) return entries;
  const states = await treeStatesOf(sql, folders);
  nodes.forEach((node, index) => {
    const state = node.type === 'Dir' ? states.get(node.uuid) : undefined;
    const entry = entries[index];
    if (state && entry) Object.assign(entry, { tree_etag: state.etag, tree_size: state.bytes });
  });
  return entries;
}

/** Listed nodes the caller may read, with the caller's stars and the share counts (one query each, whatever the count). */
export async function entriesOf(ctx: StoreContext, caller: AuthenticatedUser, nodes: NodeRow[]): Promise<DirEntry[]> {
  const readable = await filterInOrder(nodes, async (node) => (await permissionsOn(ctx.storage.sql, caller, node)).includes('read'));
  const uuids = readable.map((node) => node.uuid);
  const counts = await shareCountsOf(ctx.storage.sql, uuids);
  const starred = await starredAmong(ctx.storage.sql, caller.userUuid, uuids);
  const checksums = await checksumsOfNodes(ctx.storage.sql, readable.filter((node) => node.type === 'File').map((node) => node.uuid));
  const entries = readable.map((node) => {
    const sums = checksums.get(node.uuid);
    return toDirEntry({ ...node, sha1: sums?.sha1 ?? null, md5: sums?.md5 ?? null, is_starred: starred.has(node.uuid) }, caller.userUuid, counts);
  });
  return withTreeStates(ctx.storage.sql, readable, entries);
}

/** What an operation that may wait for an approver answers: the request's UUID when it does. */
export interface NodeOperationResult {
  pendingUuid?: string;
}

/**
 * One POST /api/nodes/{id} operation. The body is validated before anything is resolved: a bad
 * body answers 400 whether or not the node exists, so validation never reveals existence. The
 * nodes are resolved (access included) in the transaction that changes them, so what was
 * checked is what is changed, whatever another request commits meanwhile.
 */
export async function nodeOperation(ctx: StoreContext, caller: AuthenticatedUser, id: string, body: unknown): Promise<NodeOperationResult> {
  const parsed = parseNodeOperation(body);
  if (!parsed.ok) throw invalid(parsed.problem);
  const operation = parsed.operation;
  const inTransaction = (work: (tx: Sql) => Promise<void>): Promise<NodeOperationResult> => ctx.storage.sql.transaction(async (tx) => (await work(tx), {}), writesOf(caller.userUuid));
  switch (operation.op) {
    case 'newDir': {
      const name = assertValidName(operation.name);
      return inTransaction(async (tx) => {
        await createFolder(writeOf(ctx, caller, tx), await resolveNode(tx, caller, id, 'write'), name);
      });
    }
    case 'rename': {
      const name = assertValidName(operation.name);
      return inTransaction(async (tx) => rename(writeOf(ctx, caller, tx), await resolveNode(tx, caller, id, 'write'), name));
    }
    case 'star':
      return inTransaction(async (tx) => setStarred(writeOf(ctx, caller, tx), await resolveNode(tx, caller, id, 'read'), operation.starred));
    case 'copyTo':
      return inTransaction(async (tx) => {
        const { node: source, access } = await resolveNodeAccess(tx, caller, id, 'read');
        const target = await resolveNode(tx, caller, operation.target, 'write');
        assertMayLeaveOwner(access, source, target, 'copy');
        await copyInto(writeOf(ctx, caller, tx), source, target);
      });
    case 'moveTo':
      return inTransaction(async (tx) => {
        const { node: source, access } = await resolveNodeAccess(tx, caller, id, 'write');
        const target = await resolveNode(tx, caller, operation.target, 'write');
        assertMayLeaveOwner(access, source, target, 'move');
        await moveInto(writeOf(ctx, caller, tx), source, target);
      });
    case 'shareCopyWith': {
      // Waiting for an approver (3.0) answers the request's UUID instead of sharing now.
      const { pendingUuid } = await shareCopyWith(ctx, caller, id, operation.recipients, operation.comment);
      return pendingUuid === undefined ? {} : { pendingUuid };
    }
  }
}

/**
 * DELETE: into the owner's trash, or for good inside it or, for the owner's side, below a "delete
 * for good" folder (the freed blob files go after the commit). A delete a share allows goes to
 * the owner's trash whatever the mark (access.ts mayActAsOwner `skip-trash`).
 */
export async function deleteNode(ctx: StoreContext, caller: AuthenticatedUser, id: string): Promise<'trashed' | 'purged'> {
  const { unreferenced, outcome } = await ctx.storage.sql.transaction(async (tx): Promise<{ unreferenced: string[]; outcome: 'trashed' | 'purged' }> => {
    const { node, access } = await resolveNodeAccess(tx, caller, id, 'delete');
    const purged = async () => ({ unreferenced: await purge(writeOf(ctx, caller, tx), node), outcome: 'purged' as const });
    if (node.top_kind === null && (await isInTrash(tx, node))) return purged();
    // Below a folder marked "delete for good" (ops/trash.ts): straight out, not into the trash.
    if (node.top_kind === null && mayActAsOwner(access, 'skip-trash') && (await deletesSkipTrash(tx, node))) return purged();
    await trash(writeOf(ctx, caller, tx), node);
    return { unreferenced: [], outcome: 'trashed' };
  }, writesOf(caller.userUuid));
  await removeBlobFiles(ctx, unreferenced);
  return outcome;
}

export async function nodeDetails(ctx: StoreContext, caller: AuthenticatedUser, id: string): Promise<NodeDetails> {
  return detailsOf(ctx, caller, await resolveNode(ctx.storage.sql, caller, id, 'read'));
}

/** Node details by the numeric id (docs/extensions.md "Numeric file ids"); 404 where the caller may not read the node. */
export async function nodeDetailsByFileId(ctx: StoreContext, caller: AuthenticatedUser, fileId: number): Promise<NodeDetails> {
  return detailsOf(ctx, caller, (await resolveNodeByFileId(ctx.storage.sql, caller, fileId)).node);
}

async function detailsOf(ctx: StoreContext, caller: AuthenticatedUser, node: NodeRow): Promise<NodeDetails> {
  const checksums = node.type === 'File' ? (await checksumsOfNodes(ctx.storage.sql, [node.uuid])).get(node.uuid) : undefined;
  const tree = node.type === 'Dir' ? (await treeStatesOf(ctx.storage.sql, [node.uuid])).get(node.uuid) : undefined;
  return {
    ...(tree ? { tree_etag: tree.etag, tree_size: tree.bytes } : {}),
    ...(checksums ? { checksums } : {}),
    ...((await skipsTrash(ctx, node)) ? { skip_trash: true as const } : {}),
    name: node.name,
    type: node.type,
    uuid: publicId(node, caller.userUuid),
    owner_type: node.owner_type,
    owner_uuid: node.owner_uuid,
    owner_fullname: await ownerName(ctx.storage.sql, { type: node.owner_type, uuid: node.owner_uuid }),
    created: node.created,
    updated: node.updated,
    file_id: node.file_id,
  };
}

/**
 * The path of a node: from its top-level folder down. Reached through a private share, it starts
 * at the `shared_with_you` it is listed in (the caller's, or a group's), then the shared node:
 * nothing above the shared node is shown.
 */
export async function nodePath(ctx: StoreContext, caller: AuthenticatedUser, id: string): Promise<PathEntry[]> {
  const { node, access } = await resolveNodeAccess(ctx.storage.sql, caller, id, 'read');
  let chain = await ancestry(ctx.storage.sql, node);
  const share = access.viaShare;
  if (share) {
    chain = chain.slice(chain.findIndex((row) => row.uuid === share.root));
    const top = share.recipientUuid === caller.userUuid ? 'shared_with_you' : `shared_with_you:${share.recipientUuid}`;
    return [{ name: 'shared_with_you', uuid: top }, ...chain.map((row) => ({ name: row.name, uuid: publicId(row, caller.userUuid) }))];
  }
  return chain.map((row) => ({ name: row.name, uuid: publicId(row, caller.userUuid) }));
}

/** What a dirlist may be asked beyond the interface (docs/extensions.md). */
export interface ListOptions {
  /**
   * Include macOS side files (the MAC_SIDE_FILES_HEADER: the bridge asks it). Honoured in
   * the caller's own tree and group drives; never through a share or in a derived view.
   */
  macSideFiles?: boolean;
}

/**
 * dirlist: a folder's entries, or what a derived folder (favorites, the share folders) shows.
 * macOS side files are left out (store.hideMacSideFiles) unless asked for where they are the
 * caller's own (ListOptions): other users, shares and every REST client never see them.
 */
export async function listFolder(ctx: StoreContext, caller: AuthenticatedUser, id: string, options: ListOptions = {}): Promise<DirEntry[]> {
  const { sql } = ctx.storage;
  const { node: folder, access } = await resolveNodeAccess(sql, caller, id, 'read');
  if (folder.type !== 'Dir') throw conflict('the node is not a folder', 'not_a_folder');
  const hide = ctx.config.store.hideMacSideFiles;
  const shown = (entries: DirEntry[], ownSideFiles: boolean): DirEntry[] =>
    hide && !ownSideFiles ? entries.filter((e) => !isMacSideEntry({ name: e.name, isFile: e.type === 'File' })) : entries;
  switch (folder.top_kind) {
    case 'favorites':
      return shown(await entriesOf(ctx, caller, await listFavorites(sql, folder.owner_uuid, caller.userUuid)), false);
    case 'public_shares':
    case 'private_shares':
      return shown(await entriesOf(ctx, caller, await ownerNodesWithShares(sql, folder.owner_uuid, folder.top_kind === 'public_shares' ? 'public' : 'private')), false);
    case 'shared_with_you':
      return shown(await entriesOf(ctx, caller, await nodesSharedWith(sql, folder.owner_uuid)), false);
    default: {
      const counts = await shareCountsIn(sql, folder.uuid);
      const nodes = await listChildrenWithStars(sql, folder.uuid, caller.userUuid);
      const entries = await withTreeStates(sql, nodes, nodes.map((node) => toDirEntry(node, caller.userUuid, counts)));
      if (folder.top_kind === 'trash') {
        const facts = await trashFactsOf(sql, folder, caller.userUuid);
        for (const entry of entries) {
          const trashed = facts.get(entry.uuid);
          if (trashed) entry.trashed = trashed;
        }
      }
      return shown(entries, options.macSideFiles === true && access.viaShare === undefined);
    }
  }
}

/** myaccess: what the caller may do with any node they see, even without `read`. */
export async function myAccess(ctx: StoreContext, caller: AuthenticatedUser, id: string): Promise<Permission[]> {
  return [...(await resolveNodeAccess(ctx.storage.sql, caller, id, 'visible')).access.granted];
}
