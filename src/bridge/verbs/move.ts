/**
 * MOVE (RFC 4918 §9.9): a rename (new_name), a move into another folder (move_to), or both,
 * decided by StoreTree.move; the node keeps its UUID, so its dead properties and client mtime
 * follow it with no work here. Locks do not move with a resource (§9.9.1: "a successful MOVE
 * request on a write locked resource MUST NOT move the write lock"): the ones on and below the
 * source are dropped. rclone sends absolute Destination URLs and directory MOVEs with trailing
 * slashes (docs/client-quirks.md §3); both forms are accepted.
 *
 * A file MOVEd onto an existing file (Overwrite: T; a client's safe save) becomes the next revision
 * of that file instead (StoreTree.move): the destination node stays with its history, shares and
 * locks, takes the source's dead properties and client mtime (§9.9.2: a MOVE carries them), and
 * the source's go with the source.
 *
 * Word's save by rename-away (rename-away.ts) ends the same way: the temp MOVEd onto the name
 * the document left a moment ago becomes the document's next revision, and the document its name.
 */
import { DavStatusError } from '../dav-errors.js';
import type { DavContext, VerbHandler } from '../request/context.js';
import { budgetOwnerOf, segmentsOf, type DavPath, type Resource } from '../store-tree.js';
import { encodeHref, parseDestination } from '../href.js';
import { RESTORE } from '../namespace.js';
import { checkLocks, requirePrivilege, STORE_GUARDS } from '../request/preconditions.js';
import { finishTransfer, prepareTransfer } from './destination.js';
import { completeRenameAway, rememberRenameAway } from './rename-away.js';
import { sendEmpty } from '../request/respond.js';

/**
 * 201 when the destination was new, 204 when Overwrite: T replaced it; 412 with Overwrite: F
 * onto an existing resource; 409 when the destination's parent is missing; 400 for a
 * collection with a Depth other than infinity (§9.9.2). See prepareTransfer for the rest.
 */
export const move: VerbHandler = async (ctx: DavContext) => {
  if (isRestoreTarget(ctx)) {
    await restoreFromTrash(ctx);
    return;
  }
  const transfer = await prepareTransfer(ctx);
  const { source, user } = transfer;
  if (source.entry.kind === 'folder' && transfer.depth !== 'infinity') throw new DavStatusError(400, 'MOVE of a collection must have Depth: infinity');
  const key = source.chain[source.chain.length - 1] as string;
  const restored = await completeRenameAway(ctx, transfer, true);
  if (restored) {
    await ctx.services.locks.dropLocksUnder(key);
    await takeProperties(ctx, key, restored);
    // The name was free: created, as the MOVE would have answered.
    sendEmpty(ctx, 201, await finishTransfer(ctx, transfer, false, keyOf(restored)));
    return;
  }
  const { replaced } = await ctx.services.tree.move(user, source, transfer.destination.path, transfer.overwrite);
  await ctx.services.locks.dropLocksUnder(key);
  const existing = transfer.destination.resource;
  if (transfer.revises && existing) {
    await takeProperties(ctx, key, existing);
    sendEmpty(ctx, 204, await finishTransfer(ctx, transfer, replaced, keyOf(existing)));
    return;
  }
  if (!replaced) await rememberRenameAway(ctx, transfer);
  sendEmpty(ctx, replaced ? 204 : 201, await finishTransfer(ctx, transfer, replaced, key, source));
};

function keyOf(resource: Resource): string {
  return resource.chain[resource.chain.length - 1] as string;
}

/** A file given the moved file's content takes its dead properties and client mtime (§9.9.2); the moved file's go. */
async function takeProperties(ctx: DavContext, key: string, destination: Resource): Promise<void> {
  const destinationKey = keyOf(destination);
  const { props } = ctx.services;
  if (!(await props.copy(key, destinationKey, budgetOwnerOf(ctx.user(), destination)))) {
    ctx.log.info({ destination: destination.path }, 'MOVE: dead properties left out, the owner’s limit is reached');
  }
  await props.drop(key);
}

/** A Destination of `/restore/<name>` (namespace.ts RESTORE): the MOVE is a restore from trash. */
function isRestoreTarget(ctx: DavContext): boolean {
  const raw = ctx.req.headers.destination;
  if (typeof raw !== 'string' || raw.trim() === '') return false;
  const parsed = parseDestination(raw, ctx.hosts);
  if (parsed.kind !== 'local') return false;
  const segments = segmentsOf(parsed.path.path as DavPath);
  return segments.length === 2 && segments[0] === RESTORE;
}

/**
 * MOVE of a trash entry to `/restore/<name>`: it goes back where it was deleted from (its name
 * of then; Nextcloud's restore ignores the name given too). 201 with `Location` naming where it
 * went; 403 without `write` or for anything but a trash entry; 423 for a lock on it whose token
 * was not submitted. Its locks are dropped as any MOVE's; its dead properties stay with the node.
 */
export async function restoreFromTrash(ctx: DavContext): Promise<void> {
  const user = ctx.user();
  const { tree, locks } = ctx.services;
  const source = await tree.stat(user, ctx.path);
  await requirePrivilege(ctx, source, 'write', STORE_GUARDS);
  await checkLocks(ctx, source.chain, { includeDescendants: true });
  const { path } = await tree.restoreFromTrash(user, source);
  await locks.dropLocksUnder(source.chain[source.chain.length - 1] as string);
  sendEmpty(ctx, 201, { Location: encodeHref(segmentsOf(path), { collection: source.entry.kind === 'folder' }) });
}
