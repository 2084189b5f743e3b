/**
 * Deleting a user or a group (DELETE /api/admin/users/{uuid} and /api/admin/groups/{uuid}):
 * `confirm_delete=yes`, then in ONE transaction the owner's nodes are handed to
 * `transfer_data_to` (a user or group of the same organization) or removed with their blob
 * references, and the avatar, the WebDrive endpoint and the owner's row go (memberships,
 * sessions, stars and login history with the row). Sharing goes too (docs/store-semantics.md
 * "Sharing"): the owner's approvers, the requests made in its workspace or by it, the incoming
 * shares awaiting it and its place among private share recipients; the shares of its nodes go
 * with the nodes, or with a transfer move with them unless `delete_all_public_shares` or
 * `delete_all_private_shares` says they go. Blob files no row refers to any more are unlinked
 * after the commit. Who may delete whom is the caller's to check first.
 */
import type { StoreContext } from '../context.js';
import { getGroup } from '../storage/groups.js';
import { isUuid } from '../storage/nodes.js';
import { purgeOwnerNodes, transferOwnerNodes, type Owner } from '../storage/owner-data.js';
import { getUserByUuid } from '../storage/users.js';
import { releaseEndpoint } from '../storage/webdrive.js';
import type { Sql } from '../storage/sql.js';
import { deleteShareRequest, dropApproversOf, requestsTouching } from '../storage/approvals.js';
import { dropIncomingOf } from '../storage/incoming-shares.js';
import { deleteOwnerShares, dropRecipient, reassignOwnerShares, type LinkType } from '../storage/shares.js';
import { releaseSnapshot } from '../storage/snapshots.js';
import { invalid, notFound } from '../envelope.js';
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
    (await deleteShareRequest(sql, request.uuid));
    if (request.snapshot_uuid !== null) unreferenced.push(...(await releaseSnapshot(sql, request.snapshot_uuid)));
  }
  await dropApproversOf(sql, owner.uuid);
  unreferenced.push(...(await dropIncomingOf(sql, owner.uuid)));
  (await dropRecipient(sql, owner.uuid));
  (await deleteOwnerShares(sql, owner.uuid, removed));
  return unreferenced;
}

export async function deleteOwner(
  ctx: StoreContext,
  owner: DeletedOwner,
  query: unknown,
  deleteRow: (sql: Sql) => void,
): Promise<TransferRecord | undefined> {
  const input = parseInput(deleteOwnerQuerySchema, query);
  const receiver = input.transfer_data_to === undefined ? undefined : (await receiverOf(ctx, owner, input.transfer_data_to));
  const { storage: { sql }, clock } = ctx;
  const now = clock.now();
  let unreferenced: string[] = [];
  let folder = '';
  (await sql.transaction(async (tx) => {
    // Without a receiver the shares of the owner's nodes go with the nodes (ON DELETE CASCADE).
    const removed: LinkType[] = [];
    if (input.delete_all_public_shares === true) removed.push('public', 'upload');
    if (input.delete_all_private_shares === true) removed.push('private');
    unreferenced = (await forgetSharing(tx, owner, receiver ? removed : []));
    // A share gives at most what its creator holds (access.ts): a user receiving the nodes vouches for the owner's shares on them.
    if (receiver?.type === 'User') (await reassignOwnerShares(tx, owner.uuid, receiver.uuid));
    if (receiver) folder = (await transferOwnerNodes(tx, owner, receiver, now));
    else unreferenced.push(...(await purgeOwnerNodes(tx, owner)));
    (await storeAvatar(tx, owner.uuid, null, now));
    (await releaseEndpoint(tx, owner.uuid));
    deleteRow(tx);
  }));
  await removeBlobFiles(ctx, [...new Set(unreferenced)]);
  return receiver ? { transferred_to: receiver.uuid, folder } : undefined;
}
