/**
 * Deleting a user or a group (DELETE /api/admin/users/{uuid} and /api/admin/groups/{uuid}):
 * `confirm_delete=yes`, then in ONE transaction the owner's nodes are handed to
 * `transfer_data_to` (a user or group of the same organization) or removed with their blob
 * references, and the avatar, the WebDrive endpoint and the owner's row go (memberships,
 * sessions, stars and login history with the row). Sharing goes too (docs/store-semantics.md
 * "Sharing"): the owner's approvers, the requests made in its workspace or by it, the incoming
 * shares awaiting it and its place among private share recipients; the shares of its nodes go
 * with the nodes, or with a transfer move with them unless `delete_all_public_shares` or
 * `delete_all_private_shares` says they go, and only as far as someone of the receiver's
 * workspace vouches for them (handOverShares). Blob files no row refers to any more are
 * unlinked after the commit. Who may delete whom is the caller's to check first.
 */
import { withSql, type StoreContext } from '../context.js';
import { creatorAccess, holderOf } from '../access.js';
import { getGroup, releaseEndpoint } from '../storage/groups.js';
import { propagateChange, treeBytesOf } from '../storage/tree-changes.js';
import { isUuid, handOverNodes, moveChildren, nonEmptyTopLevels, ownerBytes, purgeOwnerNodes, type Owner, getTopLevel } from '../storage/nodes.js';
import { adjustUsage, remainingBytes } from '../storage/revisions.js';
import { clearSkipTrashOf } from '../storage/trash.js';
import { getUserByUuid } from '../storage/users.js';
import {
  deleteShareRequest,
  dropApproversOf,
  requestsTouching,
  dropIncomingOf,
  deleteOwnerShares,
  deleteOwnerSharesBy,
  dropRecipient,
  reassignOwnerShares,
  shareCreatorsOn,
  type LinkType,
  releaseSnapshot,
} from '../storage/shares.js';
import { createFolder, freeName } from './tree.js';
import type { Sql } from '../storage/sql.js';
import { invalid, notFound, quotaExceeded } from '../envelope.js';
import { deleteOwnerQuerySchema } from '../schemas/groups.js';
import { storeAvatar } from './avatars.js';
import { removeBlobFiles } from './blob-files.js';
import { parseInput } from './input.js';

export interface DeletedOwner extends Owner {
  /** Names the folder the receiver gets. */
  name: string;
  orgId: string;
}

/** `data` of a deletion that transferred the data (an extension); nothing otherwise. */
export interface TransferRecord {
  transferred_to: string;
  folder: string;
}

/** The user or group of the owner's organization that `transfer_data_to` names; 404 or 400 naming the field. */
async function receiverOf(ctx: StoreContext, owner: DeletedOwner, rawUuid: string): Promise<Owner> {
  const uuid = rawUuid.toLowerCase();
  const user = isUuid(uuid) ? (await getUserByUuid(ctx.storage.sql, uuid)) : undefined;
  const group = isUuid(uuid) && !user ? (await getGroup(ctx.storage.sql, uuid)) : undefined;
  const orgId = user?.org_id ?? group?.org_id;
  if (orgId !== owner.orgId) throw notFound('transfer_data_to: no such user or group in the organization');
  if (uuid === owner.uuid) throw invalid('transfer_data_to: the data cannot be transferred to the deleted owner itself');
  return user ? { type: 'User', uuid } : { type: 'Group', uuid };
}

/**
 * Everything sharing holds of a deleted owner, inside the deletion's transaction; `removed` are
 * the link types whose shares on the owner's nodes go before a transfer. Returns the blobs no row
 * refers to any more.
 */
async function forgetSharing(sql: Sql, owner: Owner, removed: readonly LinkType[]): Promise<string[]> {
  const unreferenced: string[] = [];
  for (const request of (await requestsTouching(sql, owner.uuid))) {
    await deleteShareRequest(sql, request.uuid);
    if (request.snapshot_uuid !== null) unreferenced.push(...await releaseSnapshot(sql, request.snapshot_uuid));
  }
  await dropApproversOf(sql, owner.uuid);
  unreferenced.push(...await dropIncomingOf(sql, owner.uuid));
  await dropRecipient(sql, owner.uuid);
  await deleteOwnerShares(sql, owner.uuid, removed);
  return unreferenced;
}

/**
 * Who vouches for the shares on the nodes a transfer moves (a share gives at most what its
 * creator holds: access.ts). Decided per creator, as their shares would be after the move, by
 * access.ts creatorAccess: a share stays when its creator holds something on the node in the
 * receiver's workspace (the receiving user themself; a member of the receiving group), and is
 * held to that as any share is; it ends otherwise. A deleted user's own shares are handed to
 * the receiving user, who takes their place, when the deleted user vouched for them (active);
 * a group takes nobody's place. So a transfer never makes its receiver answer for shares others
 * made, nor brings back a share that gave nothing. Runs before the nodes move.
 */
async function handOverShares(sql: Sql, owner: DeletedOwner, receiver: Owner): Promise<void> {
  const after = { owner_type: receiver.type, owner_uuid: receiver.uuid };
  for (const creator of await shareCreatorsOn(sql, owner.uuid)) {
    const isOwners = creator !== null && creator === owner.uuid;
    const vouching = isOwners ? (receiver.type === 'User' && (await holderOf(sql, creator)) ? receiver.uuid : null) : creator;
    if ((await creatorAccess(sql, vouching, after)).length === 0) await deleteOwnerSharesBy(sql, owner.uuid, creator);
    else if (isOwners && vouching !== null) await reassignOwnerShares(sql, owner.uuid, creator, vouching);
  }
}

export async function deleteOwner(
  ctx: StoreContext,
  owner: DeletedOwner,
  query: unknown,
  deleteRow: (sql: Sql) => Promise<unknown>,
): Promise<TransferRecord | undefined> {
  const input = parseInput(deleteOwnerQuerySchema, query);
  const { storage: { sql }, clock } = ctx;
  const now = clock.now();
  let unreferenced: string[] = [];
  let folder = '';
  let receiver: Owner | undefined;
  await sql.transaction(async (tx) => {
    // Resolved here, so a receiver deleted meanwhile is a 404, not a transfer into nothing.
    receiver = input.transfer_data_to === undefined ? undefined : await receiverOf(withSql(ctx, tx), owner, input.transfer_data_to);
    // Without a receiver the shares of the owner's nodes go with the nodes (ON DELETE CASCADE).
    const removed: LinkType[] = [];
    if (input.delete_all_public_shares === true) removed.push('public', 'upload');
    if (input.delete_all_private_shares === true) removed.push('private');
    unreferenced = await forgetSharing(tx, owner, receiver ? removed : []);
    if (receiver) await handOverShares(tx, owner, receiver);
    if (receiver) folder = await transferOwnerNodes(tx, owner, receiver, now);
    else unreferenced.push(...await purgeOwnerNodes(tx, owner));
    await storeAvatar(tx, owner.uuid, null, now);
    await releaseEndpoint(tx, owner.uuid);
    await deleteRow(tx);
  });
  await removeBlobFiles(ctx, [...new Set(unreferenced)]);
  return receiver ? { transferred_to: receiver.uuid, folder } : undefined;
}

/**
 * Hands every node of `from` to `to`: a folder named after `from` (numbered when the name is
 * taken) appears in the receiver's home, holding one folder per top-level folder of `from` that
 * had content (`home`, `incoming`, `trash`), with that content inside. Nodes from trash forget
 * their origin, and folders lose their "delete for good" mark (ops/tree.ts giveToOwner). The
 * bytes move from one usage to the other, within the receiver's quota (507, nothing changed). The emptied top-level folders of `from` are removed. Returns the folder's name.
 */
async function transferOwnerNodes(sql: Sql, from: Owner & { name: string }, to: Owner, nowMs: number): Promise<string> {
  const bytes = await ownerBytes(sql, from.uuid);
  if (bytes > (await remainingBytes(sql, to.type, to.uuid))) {
    throw quotaExceeded(`transfer_data_to: the receiver's disk_quota cannot hold the ${bytes} bytes to transfer`);
  }
  const home = await getTopLevel(sql, to.uuid, 'home');
  if (!home) throw new Error(`owner ${to.uuid} has no home folder`);
  const name = await freeName(sql, home.uuid, folderNameFor(from.name), 'Dir');

  const write = { sql, now: nowMs, callerUuid: to.uuid };
  const folder = await createFolder(write, home, name);
  for (const top of await nonEmptyTopLevels(sql, from.uuid)) {
    const holder = await createFolder(write, folder, top.top_kind);
    const moved = await treeBytesOf(sql, { uuid: top.uuid, type: 'Dir', size: 0 });
    await moveChildren(sql, top.uuid, holder.uuid);
    await propagateChange(sql, holder.uuid, moved);
  }
  // Whether deletes skip a trash is its owner's decision: the receiver's trash keeps what they delete.
  await clearSkipTrashOf(sql, from.uuid);
  await handOverNodes(sql, from, to);
  await adjustUsage(sql, to.type, to.uuid, bytes);
  return name;
}

/** A node name made from an owner's name: no `/` or NUL, at most 255 bytes, never empty. */
function folderNameFor(ownerName: string): string {
  let chars = Array.from(ownerName.replace(/[/\0]/g, '_').trim());
  while (Buffer.byteLength(chars.join(''), 'utf8') > 240) chars = chars.slice(0, -1);
  const name = chars.join('');
  return name === '' || name === '.' || name === '..' ? 'deleted owner' : name;
}
