/**
 * What MOVE and COPY share (RFC 4918 §9.8, §9.9): reading Destination, Overwrite and Depth,
 * the checks that need no store write (same resource, a collection into itself, locks and If
 * conditions on both ends), and the bookkeeping after the store changed (locks of a replaced
 * destination, X-OC-Mtime). It never changes the store itself: the verbs call StoreTree.
 */
import { DavStatusError } from '../dav-errors.js';
import { ocChecksumMismatch } from '../../common/oc-checksum.js';
import { parseDestination } from '../href.js';
import { filesPathOf } from '../remote-dav.js';
import { clientMtimeOf } from '../dead-properties.js';
import { nodeHeaders } from '../commit.js';
import type { BridgeUser } from '../sessions.js';
import { isDerivedViewEntry, isFixedPath, revisesInPlace, segmentsOf, type DavPath, type Resource } from '../store-tree.js';
import type { DavContext } from '../request/context.js';
import { deletedStateOf, forgetDeleted, type DeletedState } from './deleted-state.js';
import { checkHttpConditions, checkIfHeader, checkLocks, requirePrivilege, STORE_GUARDS, writeTargetOf, type WriteTarget } from '../request/preconditions.js';
import { headerValue } from '../request/headers.js';

export interface Transfer {
  user: BridgeUser;
  source: Resource;
  /** The destination path (NFC, no trailing slash) and what is there now. */
  destination: WriteTarget;
  /** Overwrite: T (the default, RFC 4918 §10.6). */
  overwrite: boolean;
  /** Depth: infinity (the default) or 0. */
  depth: '0' | 'infinity';
  /** What goes with an existing destination when Overwrite: T replaces it (after the store accepted the new node). */
  replacing?: DeletedState;
  /**
   * A file onto an existing file with Overwrite: T: the source's content becomes the next
   * revision of the destination node, which stays (with its locks); nothing is replaced.
   */
  revises: boolean;
}

/** Overwrite (RFC 4918 §10.6): `T` or `F`, T when absent (rclone relies on that: docs/client-quirks.md §3). */
function overwriteOf(ctx: DavContext): boolean {
  const raw = headerValue(ctx.req.headers.overwrite);
  if (raw === undefined) return true;
  const value = raw.trim().toUpperCase();
  if (value === 'T') return true;
  if (value === 'F') return false;
  throw new DavStatusError(400, `Overwrite ${JSON.stringify(raw)} is neither T nor F`);
}

/** Depth of a MOVE or COPY: 'infinity' when absent; '0' or 'infinity' otherwise, else 400. */
function transferDepthOf(ctx: DavContext): '0' | 'infinity' {
  const raw = headerValue(ctx.req.headers.depth);
  if (raw === undefined) return 'infinity';
  const value = raw.trim().toLowerCase();
  if (value === '0' || value === 'infinity') return value;
  throw new DavStatusError(400, `Depth ${JSON.stringify(raw)} is not allowed on ${ctx.method}`);
}

/** `inner` lies strictly below `outer`. */
function isBelow(inner: DavPath, outer: DavPath): boolean {
  return outer === '/' ? inner !== '/' : inner.startsWith(`${outer}/`);
}

/**
 * Reads the request and checks everything a MOVE or COPY must check before writing. Throws
 * 400 (no or malformed Destination, bad Overwrite, a Depth other than 0 or infinity), 502
 * (Destination on another server, §9.8.5), 404 (no source), 403 (source and destination are one resource, the root or a
 * top-level folder involved, a collection into itself, or a destination that contains the
 * source when Overwrite is T), 412 (If header, If-Match; Overwrite F onto a containing
 * collection), 423 (a lock on the moved source or on the destination whose token was not
 * submitted). Locks on the source do not stop a COPY (it does not change the source).
 */
export async function prepareTransfer(ctx: DavContext): Promise<Transfer> {
  const user = ctx.user();
  const { tree } = ctx.services;
  const isMove = ctx.method === 'MOVE';
  const rawDestination = headerValue(ctx.req.headers.destination);
  if (rawDestination === undefined || rawDestination.trim() === '') throw new DavStatusError(400, 'Destination header missing');
  const parsed = parseDestination(rawDestination, ctx.hosts);
  if (parsed.kind === 'other-host') throw new DavStatusError(502, 'Destination is on another server');
  // The drive through /remote.php/dav/files/<user>/ is the drive: either form names it.
  const inDrive = filesPathOf(parsed.path, user.name);
  if (!inDrive) throw new DavStatusError(404, 'Destination lies outside the drive');
  const destinationPath = inDrive.path as DavPath;
  const overwrite = overwriteOf(ctx);
  const depth = transferDepthOf(ctx);

  const source = await tree.stat(user, ctx.path);
  if (source.kind === 'root') throw new DavStatusError(403, 'the root cannot be moved or copied');
  if (isMove && source.kind === 'top') throw new DavStatusError(403, 'top-level folders are fixed');
  // An entry of a derived view is a node living elsewhere: moving it would take it away from
  // its place (another owner's, often). Copying it out changes nothing and is allowed.
  if (isMove && isDerivedViewEntry(source)) throw new DavStatusError(403, 'an entry of a derived view is not moved through the view');
  if (isFixedPath(destinationPath)) throw new DavStatusError(403, 'top-level folders are fixed');
  if (destinationPath === source.path) throw new DavStatusError(403, 'source and destination are the same resource');
  if (source.entry.kind === 'folder' && isBelow(destinationPath, source.path)) {
    throw new DavStatusError(403, 'a collection cannot be moved or copied into itself');
  }

  const destination = await writeTargetOf(ctx, destinationPath);
  const existing = destination.resource;
  if (existing) {
    // Overwrite would delete the node the view shows before the store refuses writing there.
    if (isDerivedViewEntry(existing)) throw new DavStatusError(403, 'an entry of a derived view is not replaced through the view');
    if (existing.entry.id === source.entry.id) throw new DavStatusError(403, 'source and destination are the same resource');
    if (isBelow(source.path, destinationPath)) {
      // Overwrite: T would delete the source with the destination (Apache mod_dav answers 403 too).
      if (!overwrite) throw new DavStatusError(412, 'the destination exists');
      throw new DavStatusError(403, 'the destination contains the source');
    }
  }

  // Permissions first (no condition or token can grant one): a MOVE renames or takes the
  // source away (write; and delete when it leaves its owner's tree), a COPY reads it, and
  // either writes into the destination's collection (and deletes what Overwrite replaces).
  if (isMove) {
    await requirePrivilege(ctx, source, 'write', STORE_GUARDS);
    const destinationTop = (existing ?? destination.parent)?.top?.id;
    if (destinationTop !== source.top?.id) await requirePrivilege(ctx, source, 'delete', STORE_GUARDS);
  } else {
    await requirePrivilege(ctx, source, 'read', STORE_GUARDS);
  }
  // A new revision of an existing file writes it and deletes nothing there.
  const revises = existing !== undefined && overwrite && revisesInPlace(source, existing);
  await requirePrivilege(ctx, existing ?? destination.parent, 'write', STORE_GUARDS);
  if (existing && overwrite && !revises) await requirePrivilege(ctx, existing, 'delete', STORE_GUARDS);

  // Untagged If lists name the request URI, the source; tagged lists may name the destination.
  const sourceTarget: WriteTarget = { path: source.path, resource: source, chain: source.chain };
  await checkIfHeader(ctx, sourceTarget);
  checkHttpConditions(ctx, sourceTarget);
  assertSourceChecksum(ctx, source);
  if (isMove) await checkLocks(ctx, source.chain, { includeDescendants: true });
  // An existing destination is replaced (RFC 4918 §9.8.4, §9.9.3: deleted first; the store tree
  // trashes it only once the store accepted the new node, so a refusal keeps it): locks below it count.
  // A file given a new revision is written as a PUT writes it: its lock needs its token too.
  // With Overwrite: F nothing is written there; the store tree answers 412.
  if (!existing || overwrite) await checkLocks(ctx, destination.chain, { includeDescendants: existing !== undefined });
  const replacing = existing && overwrite && !revises ? deletedStateOf(ctx, user, existing) : undefined;
  return { user, source, destination, overwrite, depth, revises, ...(replacing ? { replacing } : {}) };
}

/**
 * A client's `OC-Checksum` on COPY or MOVE names the content it expects to transfer: checked
 * against the source file's checksums, a contradiction is 400 before anything changes. A folder,
 * or a file whose checksums are not known (a foreign store, a blob the backfill has not reached),
 * cannot contradict it (docs/extensions.md "Checksums").
 */
function assertSourceChecksum(ctx: DavContext, source: Resource): void {
  const claim = headerValue(ctx.req.headers['oc-checksum']);
  if (claim === undefined || source.entry.kind !== 'file' || !source.entry.checksums) return;
  const wrong = ocChecksumMismatch(claim, source.entry.checksums);
  if (wrong) throw new DavStatusError(400, `the source does not match its OC-Checksum ${wrong.algorithm}`);
}

/**
 * After the store changed: a replaced destination was deleted (its locks go; in trash, its dead
 * properties too; never called when the store refused, so a refused transfer keeps them), and a client's X-OC-Mtime (rclone: docs/client-quirks.md §3) becomes the mtime of
 * the resource now at the destination. Returns the headers to answer with: what names the node now
 * at the destination (commit.ts nodeHeaders: ETag, OC-ETag, OC-FileId; `moved`: the source, when
 * that node itself is now at the destination) and `X-OC-Mtime: accepted`.
 */
export async function finishTransfer(ctx: DavContext, transfer: Transfer, replaced: boolean, newKey: string | undefined, moved?: Resource): Promise<Record<string, string>> {
  if (replaced && transfer.replacing) await forgetDeleted(ctx, transfer.replacing);
  // A file renamed or moved keeps its id and revision, so its ETag: no listing of the destination for it.
  const unchanged = moved?.entry.kind === 'file' && moved.entry.revision !== undefined ? { ...moved, path: transfer.destination.path } : undefined;
  const now = unchanged ?? (await ctx.services.tree.tryStat(transfer.user, transfer.destination.path));
  const headers = now ? await nodeHeaders(ctx, now) : {};
  const mtimeMs = clientMtimeOf(headerValue(ctx.req.headers['x-oc-mtime']), ctx.services.clock.now());
  if (mtimeMs === undefined || newKey === undefined) return headers;
  await ctx.services.props.setMtime(newKey, mtimeMs);
  return { ...headers, 'X-OC-Mtime': 'accepted' };
}
