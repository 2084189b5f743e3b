/**
 * COPY (RFC 4918 §9.8): copy_to through StoreTree.copy (a copy under another name goes through
 * a staging folder there), Depth infinity (the default) or 0 (the collection alone, §9.8.3).
 * The copy is a new resource with new UUIDs: the bridge gives it the source's dead properties
 * and client mtime (§9.8.2: dead properties SHOULD be duplicated). Locks are not copied, and a
 * lock on the source does not stop a COPY.
 *
 * Limit: inside a copied collection, the properties of members are carried over only for the
 * members the bridge finds in its metadata cache (folders listed within the cache TTL); finding
 * the others would cost a dirlist per folder of the source. The copy of a member that is not
 * found that way simply has no dead properties.
 *
 * A COPY onto the name a document was just renamed away from (Word's save by rename-away,
 * rename-away.ts) becomes the document's next revision, as the MOVE would.
 */
import type { NodeEntry, NodeId } from '../../store-client/contract.js';
import type { BridgeUser } from '../sessions.js';
import { budgetOwnerOf, type Resource } from '../store-tree.js';
import type { DavContext, VerbHandler } from '../request/context.js';
import { finishTransfer, prepareTransfer } from './destination.js';
import { completeRenameAway } from './rename-away.js';
import { sendEmpty } from '../request/respond.js';
import { revisionOfId } from '../versions-view.js';

/** Entries of the cached source subtree looked at for properties, at most. */
const MAX_MEMBERS_SCANNED = 20_000;

/**
 * 201 when the destination was new, 204 when Overwrite: T replaced it; 400 for Depth 1 (only 0
 * and infinity are defined for COPY, §9.8.3); 409 when the destination's parent is missing;
 * 412 with Overwrite: F onto an existing resource; 507 when the copy passes the quota.
 */
export const copy: VerbHandler = async (ctx: DavContext) => {
  const transfer = await prepareTransfer(ctx);
  const { source, user } = transfer;
  const { tree, props } = ctx.services;
  if (revisionOfId(source.entry.id)) {
    // Out of /versions/: a restore onto its file, or a new file with the revision's bytes.
    const { replaced } = await tree.copyRevision(user, source, transfer.destination.path);
    const target = await tree.tryStat(user, transfer.destination.path);
    const targetKey = target ? keyOf(target) : undefined;
    // The restored content is new now: a client mtime kept from an earlier upload no longer describes it.
    if (replaced && targetKey !== undefined) await props.clearMtime(targetKey);
    sendEmpty(ctx, replaced ? 204 : 201, await finishTransfer(ctx, transfer, replaced, targetKey));
    return;
  }
  const restored = await completeRenameAway(ctx, transfer, false);
  if (restored) {
    if (!(await props.copy(keyOf(source), keyOf(restored), budgetOwnerOf(user, restored)))) {
      ctx.log.info({ destination: restored.path }, 'COPY: dead properties left out, the owner’s limit is reached');
    }
    sendEmpty(ctx, 201, await finishTransfer(ctx, transfer, false, keyOf(restored)));
    return;
  }
  const shallow = transfer.depth === '0' && source.entry.kind === 'folder';
  const { replaced } = await tree.copy(user, source, transfer.destination.path, transfer.overwrite, { shallow });
  // copy_to returns no id: the destination's listing names it (and serves the next PROPFIND).
  const copied = await tree.tryStat(user, transfer.destination.path);
  let key: string | undefined;
  if (copied) {
    key = keyOf(copied);
    const owner = budgetOwnerOf(user, copied);
    let complete = await props.copy(keyOf(source), key, owner);
    if (!shallow && source.entry.kind === 'folder' && copied.entry.kind === 'folder') {
      complete = (await copyMemberProperties(ctx, user, source.entry.id, copied.entry.id, owner)) && complete;
    }
    if (!complete) ctx.log.info({ owner, destination: transfer.destination.path }, 'COPY: dead properties left out, the owner’s limit is reached');
  } else {
    ctx.log.warn({ destination: transfer.destination.path }, 'the copy is not listed at its destination');
  }
  sendEmpty(ctx, replaced ? 204 : 201, await finishTransfer(ctx, transfer, replaced, key));
};

function keyOf(resource: Resource): string {
  return resource.chain[resource.chain.length - 1] as string;
}

interface Member {
  entry: NodeEntry;
  /** Index of the parent member in the scan, -1 for a child of the copied collection. */
  parent: number;
  hasState: boolean;
  /** A folder with a member below it that has properties. */
  leadsToState: boolean;
}

/**
 * Gives the members of a copied collection the properties of their source twins, matched by
 * relative path. The source subtree is read from cached listings only; destination folders are
 * listed only on the way to a member that has properties, so a tree without any costs no store
 * call.
 */
async function copyMemberProperties(ctx: DavContext, user: BridgeUser, from: NodeId, to: NodeId, owner: string): Promise<boolean> {
  const { cache, tree, props } = ctx.services;
  const cachedEntries = (folder: NodeId): readonly NodeEntry[] | undefined => cache.listing(user.userId, tree.folderKey(user, folder))?.entries;

  const members: Member[] = [];
  const queue: Array<{ folder: NodeId; parent: number }> = [{ folder: from, parent: -1 }];
  for (let q = 0; q < queue.length && members.length < MAX_MEMBERS_SCANNED; q++) {
    const next = queue[q] as { folder: NodeId; parent: number };
    for (const entry of cachedEntries(next.folder) ?? []) {
      members.push({ entry, parent: next.parent, hasState: false, leadsToState: false });
      if (entry.kind === 'folder') queue.push({ folder: entry.id, parent: members.length - 1 });
    }
  }
  if (members.length === 0) return true;
  const keys = members.map((m) => tree.folderKey(user, m.entry.id));
  const [withProps, withMtimes] = await Promise.all([props.listMany(keys), props.getMtimes(keys)]);
  members.forEach((member, i) => {
    const key = keys[i] as string;
    if (!withProps.has(key) && !withMtimes.has(key)) return;
    member.hasState = true;
    for (let up = member.parent; up >= 0 && !(members[up] as Member).leadsToState; up = (members[up] as Member).parent) {
      (members[up] as Member).leadsToState = true;
    }
  });

  const children = new Map<number, number[]>();
  members.forEach((member, i) => {
    const siblings = children.get(member.parent);
    if (siblings) siblings.push(i);
    else children.set(member.parent, [i]);
  });
  let complete = true;
  const pending: Array<{ parent: number; target: NodeId }> = [{ parent: -1, target: to }];
  while (pending.length > 0) {
    const { parent, target } = pending.pop() as { parent: number; target: NodeId };
    const wanted = (children.get(parent) ?? []).filter((i) => (members[i] as Member).hasState || (members[i] as Member).leadsToState);
    if (wanted.length === 0) continue;
    const listing = await tree.listing(user, target);
    for (const i of wanted) {
      const member = members[i] as Member;
      const twin = listing.byName.get(member.entry.name.normalize('NFC'));
      if (!twin || twin.kind !== member.entry.kind) continue;
      if (member.hasState && !(await props.copy(keys[i] as string, tree.folderKey(user, twin.id), owner))) complete = false;
      if (member.leadsToState) pending.push({ parent: i, target: twin.id });
    }
  }
  return complete;
}
