/**
 * THE write path: every door that writes a file's content ends in commitWrite (PUT, the
 * Nextcloud MOVE of an upload's `.file`, the tus PATCH that completes an upload, and any door
 * added later). In this order, each refusal before a byte is written:
 *
 * 1. the target (checkTarget): a collection at the name (PUT 405 with Allow, an upload 409), its
 *    folder missing or not visible (409: a group the caller is not in looks the same), anything in
 *    the trash (403: the store creates nothing there), then the write privilege (requirePrivilege:
 *    403, and 403 in every made-up or derived place: the root, `/groups/`, `/favorites/`...);
 * 2. the If header, If-Match / If-None-Match and locks (checkWrite: 412, 423);
 * 3. the quota (checkQuota: 507), the bytes an upload's own parts already hold not counted twice;
 * 4. the write (StoreTree.write; the body opened only now, `OC-Checksum` verified by the store);
 * 5. the answer's headers: ETag, OC-ETag, OC-FileId, OC-Checksum (when the store published the
 *    file's checksums), Last-Modified, `X-OC-Mtime: accepted` (the client's mtime kept for the
 *    node; a write without one forgets a kept one: the content changed).
 *
 * An upload runs steps 1 to 3 (checkWritable) or step 1 and 3 where its protocol names the target
 * at its start too (tus POST, Nextcloud v2 MKCOL), so a refused upload sends no byte, and all of
 * them again at its commit. A door answers in its own shape (Sabre error bodies, tus headers);
 * what is refused, and in which order, is decided here alone.
 */
import type { Readable } from 'node:stream';
import type { UploadSession } from '../contracts/upload-sessions.js';
import type { NodeEntry } from '../store-client/contract.js';
import { DavStatusError } from './dav-errors.js';
import { parseOcMtime } from './dead-properties.js';
import type { DavContext } from './request/context.js';
import { checkWrite, etagOf, requirePrivilege, STORE_GUARDS, writeTargetOf, type WriteTarget } from './request/preconditions.js';
import type { BridgeUser } from './sessions.js';
import { budgetOwnerOf, parentOf, type DavPath, type Resource } from './store-tree.js';

/** Who writes: a PUT (a collection at the name is 405, RFC 9110 §9.3.4), or an upload's commit (409, as Nextcloud answers). */
export type WriteDoor = 'put' | 'upload';

/** What PUT is allowed on a collection (the 405's Allow). */
const COLLECTION_ALLOW = 'OPTIONS, GET, HEAD, DELETE, PROPFIND, PROPPATCH, COPY, MOVE, LOCK, UNLOCK';

/**
 * Where a write will land, checked before any byte of it: see step 1 above. The trash has its
 * own line: the privileges there are the owner's, yet the store creates nothing in it, so an
 * upload aimed there would learn it only at its end.
 */
export async function checkTarget(ctx: DavContext, path: DavPath, door: WriteDoor): Promise<WriteTarget> {
  const target = await writeTargetOf(ctx, path);
  if (target.resource?.entry.kind === 'folder') {
    if (door === 'put') throw new DavStatusError(405, 'PUT on a collection', undefined, { Allow: COLLECTION_ALLOW });
    throw new DavStatusError(409, 'a collection has the name of the upload’s target');
  }
  if (!target.resource && (!target.parent || target.parent.entry.kind !== 'folder')) throw new DavStatusError(409, 'parent collection missing');
  const where = (target.resource ?? target.parent) as Resource;
  if (where.top?.name === 'trash') throw new DavStatusError(403, 'nothing is written into the trash');
  await requirePrivilege(ctx, where, 'write', STORE_GUARDS);
  return target;
}

/** Whose quota a write spends (a group's in its drive, else the user's) and what it leaves: Infinity when the store sets none. */
export interface QuotaRoom {
  /** The budget's owner: the user's id, or the group's (budgetOwnerOf): what the upload reservations of one quota share. */
  scope: string;
  availableBytes: number;
}

/** The resource whose quota applies where `where` lies: a path's file, or its folder when the file is not there yet; a target's resource or parent. */
async function quotaHolderOf(ctx: DavContext, user: BridgeUser, where: DavPath | WriteTarget | Resource | undefined): Promise<Resource | undefined> {
  const { tree } = ctx.services;
  if (typeof where === 'string') return (await tree.tryStat(user, where)) ?? (await tree.tryStat(user, parentOf(where)));
  if (where && 'entry' in where) return where;
  return where ? (where.resource ?? where.parent) : undefined;
}

/**
 * The quota where `where` lies (the caller's own when it is not known yet, Nextcloud v1), as the
 * store answers it (StoreTree.quota). The one place the bridge asks what a write may spend: the
 * check below and the upload reservations (uploads/upload-quota.ts) both stand on it.
 */
export async function quotaRoomAt(ctx: DavContext, user: BridgeUser, where: DavPath | WriteTarget | Resource | undefined): Promise<QuotaRoom> {
  const resource = await quotaHolderOf(ctx, user, where);
  const quota = await ctx.services.tree.quota(user, resource);
  return { scope: resource ? budgetOwnerOf(user, resource) : user.userId, availableBytes: quota?.availableBytes ?? Number.POSITIVE_INFINITY };
}

/**
 * THE quota check for writes: 507 unless `totalBytes` fits the quota where the write lands beside
 * what the uploads under way there hold (their parts' reservations, any instance's). `heldBy`: the
 * upload whose own parts already hold these bytes, so they do not count twice. The store refuses
 * a write over quota in any case, as the bytes stream in; `besideUploadsOnly` (a PUT, whose body
 * is on its way already) asks the store's quota only when uploads under way hold some of it, what
 * the store cannot know: a PUT costs no store call for it otherwise.
 */
export async function checkQuota(ctx: DavContext, user: BridgeUser, totalBytes: number, where: DavPath | WriteTarget | undefined, heldBy?: UploadSession, options: { besideUploadsOnly?: boolean } = {}): Promise<void> {
  const resource = await quotaHolderOf(ctx, user, where);
  const scope = resource ? budgetOwnerOf(user, resource) : user.userId;
  const elsewhere = await ctx.services.uploads.reservedElsewhere(scope, heldBy?.key);
  if (options.besideUploadsOnly && elsewhere === 0) return;
  const quota = await ctx.services.tree.quota(user, resource);
  const availableBytes = quota?.availableBytes ?? Number.POSITIVE_INFINITY;
  if (totalBytes <= availableBytes - elsewhere) return;
  const held = elsewhere > 0 ? `, and other uploads under way hold ${elsewhere} of them` : '';
  throw new DavStatusError(507, `the write needs ${totalBytes} bytes and ${availableBytes} are left in the quota${held}`, 'quota-not-exceeded');
}

export interface WritePlace {
  path: DavPath;
  door: WriteDoor;
  /** The body's size when known (a chunked PUT without a size hint: unknown, the store checks the quota as it streams). */
  sizeBytes: number | undefined;
  /** The upload session whose parts make the body (its reservation is its own). */
  heldBy?: UploadSession | undefined;
}

/** Steps 1 to 3: the target, its conditions and locks, the quota. */
export async function checkWritable(ctx: DavContext, user: BridgeUser, place: WritePlace): Promise<WriteTarget> {
  const target = await checkTarget(ctx, place.path, place.door);
  await checkWrite(ctx, target);
  // An empty file (a LOCK's, a client's placeholder) takes no room: no quota to ask.
  if (place.sizeBytes) await checkQuota(ctx, user, place.sizeBytes, target, place.heldBy, { besideUploadsOnly: place.door === 'put' });
  return target;
}

export interface ContentWrite extends WritePlace {
  /** Opened only once every check passed: a PUT's small body is read then, an upload's parts assembled then. */
  body: () => Readable | Buffer | Promise<Readable | Buffer>;
  /** The client's `OC-Checksum` for the whole content (`SHA1:<hex>`...): the store refuses the bytes when they contradict it (StoreError `invalid`). */
  checksum?: string | undefined;
  /** The client's mtime, unix seconds as `X-OC-Mtime` spells it. */
  mtime?: string | undefined;
}

export interface CommittedWrite {
  created: boolean;
  entry?: NodeEntry;
  /** The answer's headers (step 5). */
  headers: Record<string, string>;
}

/** Steps 1 to 5. Throws DavStatusError for a refusal, StoreError for the store's; a broken body's stream is destroyed. */
export async function commitWrite(ctx: DavContext, user: BridgeUser, write: ContentWrite): Promise<CommittedWrite> {
  const target = await checkWritable(ctx, user, write);
  const body = await write.body();
  let result: { created: boolean; entry?: NodeEntry };
  try {
    result = await ctx.services.tree.write(user, write.path, body, write.sizeBytes, ctx.signal, write.checksum);
  } catch (err) {
    if (!Buffer.isBuffer(body)) body.destroy();
    throw err;
  }
  return { ...result, headers: await answerHeaders(ctx, user, write, target, result) };
}

/** Step 5: the client's mtime kept (or a kept one forgotten), and the headers to answer with. */
async function answerHeaders(ctx: DavContext, user: BridgeUser, write: ContentWrite, target: WriteTarget, result: { created: boolean; entry?: NodeEntry }): Promise<Record<string, string>> {
  const { tree, props } = ctx.services;
  const headers: Record<string, string> = {};
  const { entry } = result;
  const nodeKey = target.resource ? target.resource.chain[target.resource.chain.length - 1] : entry ? tree.folderKey(user, entry.id) : undefined;
  const ocMtime = parseOcMtime(write.mtime);
  let mtimeKey = nodeKey;
  if (ocMtime !== undefined && mtimeKey === undefined) {
    const written = await tree.tryStat(user, write.path);
    mtimeKey = written ? written.chain[written.chain.length - 1] : undefined;
  }
  if (mtimeKey !== undefined) {
    if (ocMtime !== undefined) {
      await props.setMtime(mtimeKey, ocMtime);
      headers['X-OC-Mtime'] = 'accepted';
    } else if (target.resource) {
      await props.clearMtime(mtimeKey);
    }
  }
  if (entry) {
    const written: Resource = { path: write.path, kind: 'node', entry, chain: [...target.chain.slice(0, -1), tree.folderKey(user, entry.id)] };
    headers.ETag = etagOf(written);
    // Nextcloud's clients read the ETag and the file id of what they uploaded from these.
    headers['OC-ETag'] = headers.ETag;
    headers['OC-FileId'] = await ctx.services.fileIds.ocIdOf(written);
    if (entry.checksums) headers['OC-Checksum'] = `SHA1:${entry.checksums.sha1}`;
    headers['Last-Modified'] = new Date(ocMtime ?? entry.updatedMs).toUTCString();
  }
  return headers;
}
