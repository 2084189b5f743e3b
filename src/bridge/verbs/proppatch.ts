/**
 * PROPPATCH (RFC 4918 §9.2): set and remove instructions in document order, any number of
 * DAV:set / DAV:remove blocks (two DAV:set blocks crash webdav-server 2.6.3: docs/client-quirks.md §0),
 * all or nothing. Dead properties are kept per node key in the bridge's PropertyRepository, so
 * they follow the node through moves and are seen through every path. Live DAV: properties are
 * protected (403 + DAV:cannot-modify-protected-property); when any instruction fails, nothing
 * is applied and every other property gets 424 Failed Dependency (§9.2.1).
 *
 * Client modification times: Windows' Win32LastModifiedTime (docs/client-quirks.md §2) and Cyberduck's
 * SAR:lastmodified (Sardine's custom namespace `SAR:`, §5) are kept as dead properties like any
 * other and also recorded as the node's client mtime, which PROPFIND reports as getlastmodified.
 * `DAV:lastmodified` (rclone 1.63+ with vendor owncloud or nextcloud, as ownCloud and Nextcloud
 * take it: unix seconds, or an HTTP-date) only sets the client mtime, exactly as X-OC-Mtime does,
 * and is never stored as a dead property; a value that is neither answers 409 (RFC 4918 §9.2.1),
 * so nothing is applied. rclone sends `oc:checksums` in the same request (its hash of the file);
 * that is answered 200 and never stored either: the hashes are the server's to publish. It is
 * verified against the file's checksums when the store publishes them: a claim that names
 * another content answers 409, so nothing is applied (common/oc-checksum.ts decides).
 * `oc:favorite` (Nextcloud's TagsPlugin; the Android library's ToggleFavoriteRemoteOperation sets
 * `1` and removes it to take it off) is the caller's star in the store (StoreClient.setStarred),
 * never a dead property: it needs only what the store's `starred` needs (read), so alone it asks
 * no write privilege and no lock; the root, a made-up collection or a drive itself answer 403 in
 * its propstat, as does the store's refusal. Beyond resolving the path, the store is called only
 * for the star and the skip-trash mark.
 *
 * Needs write-properties, i.e. `write` on the node (the root, virtual collections and derived
 * views: never). Properties count against the per-node and per-owner limits of
 * the PropertyRepository (budgetOwnerOf says whose); passing one answers 507 for the properties set.
 */
import { ocChecksumMismatch } from '../../common/oc-checksum.js';
import type { FileChecksums } from '../../store-client/types.js';
import { DavStatusError } from '../dav-errors.js';
import { DAV_NS, errorXml, MultistatusWriter, parseProppatch, propKey, readBody, type PropName, type PropPatchInstruction } from '../dav-xml.js';
import { DeadPropertyLimitError, parseDateProperty, parseLastModified, type DeadPropertyChange } from '../dead-properties.js';
import { encodeHref } from '../href.js';
import { budgetOwnerOf } from '../store-tree.js';
import type { VerbHandler } from '../request/context.js';
import { isLiveProperty, OC_FAVORITE } from './propfind.js';
import { StoreError } from '../../store-client/contract.js';
import { checkWrite, requirePrivilege, STORE_GUARDS } from '../request/preconditions.js';
import { sendXml } from '../request/respond.js';

const MICROSOFT_NS = 'urn:schemas-microsoft-com:';
const SARDINE_NS = 'SAR:';

const OWNCLOUD_NS = 'http://owncloud.org/ns';

/**
 * driveway's "delete for good" mark of a folder (docs/extensions.md "Trash and revisions from a
 * client"): `<skip-trash xmlns="urn:driveway:">1</skip-trash>` set on a folder makes deletes below
 * it skip the trash; `0` or a remove clears it. Kept as a dead property too (so PROPFIND shows
 * it), after the store took the mark.
 */
export const SKIP_TRASH: PropName = { ns: 'urn:driveway:', local: 'skip-trash' };

function isSkipTrash(name: PropName): boolean {
  return name.ns === SKIP_TRASH.ns && name.local === SKIP_TRASH.local;
}

/** The mark the instructions leave: on, off, or undefined when they do not name it; 'invalid' for a value other than 1/0/true/false. */
function skipTrashOf(instructions: readonly PropPatchInstruction[]): boolean | 'invalid' | undefined {
  let mark: boolean | 'invalid' | undefined;
  for (const instruction of instructions) {
    if (!isSkipTrash(instruction.name)) continue;
    if (instruction.op === 'remove') mark = false;
    else {
      const value = instruction.text.trim().toLowerCase();
      mark = value === '1' || value === 'true' ? true : value === '0' || value === 'false' ? false : 'invalid';
    }
  }
  return mark;
}

/** Dead properties whose value is also the node's client mtime (a date; ignored when it is not one). */
function isMtimeProperty(name: PropName): boolean {
  return (name.ns === MICROSOFT_NS && name.local === 'Win32LastModifiedTime') || (name.ns === SARDINE_NS && name.local === 'lastmodified');
}

/** ownCloud's way to set the mtime: the client mtime itself, never a dead property. */
function isLastModified(name: PropName): boolean {
  return name.ns === DAV_NS && name.local === 'lastmodified';
}

/** A client's hash of the content (rclone's owncloud and nextcloud vendors): the server's to publish, never kept. */
function isOcChecksums(name: PropName): boolean {
  return name.ns === OWNCLOUD_NS && name.local === 'checksums';
}

/** Nextcloud's favorite mark (propfind.ts OC_FAVORITE): the store's star, never a dead property. */
function isFavorite(name: PropName): boolean {
  return name.ns === OC_FAVORITE.ns && name.local === OC_FAVORITE.local;
}

/**
 * The star the instructions leave: on, off, or undefined when they do not name oc:favorite;
 * 'invalid' for a value other than 1/0/true/false (Nextcloud's TagsPlugin reads `(int)$value`,
 * its clients send `1` and `0`).
 */
function favoriteOf(instructions: readonly PropPatchInstruction[]): boolean | 'invalid' | undefined {
  let star: boolean | 'invalid' | undefined;
  for (const instruction of instructions) {
    if (!isFavorite(instruction.name)) continue;
    const value = instruction.op === 'remove' ? '0' : instruction.text.trim().toLowerCase();
    star = value === '1' || value === 'true' ? true : value === '0' || value === 'false' || value === '' ? false : 'invalid';
  }
  return star;
}

/** What PROPPATCH answers for one instruction before anything is applied. */
function statusOf(instruction: PropPatchInstruction, checksums: FileChecksums | undefined): number {
  if (isLiveProperty(instruction.name)) return 403;
  // RFC 4918 §9.2.1: 409 for a value whose semantics do not fit the property.
  if (instruction.op === 'set' && isLastModified(instruction.name) && parseLastModified(instruction.text) === undefined) return 409;
  if (instruction.op === 'set' && isOcChecksums(instruction.name) && checksums && ocChecksumMismatch(instruction.text, checksums)) return 409;
  return 200;
}

interface Outcome {
  name: PropName;
  op: 'set' | 'remove';
  status: number;
}

export const proppatch: VerbHandler = async (ctx) => {
  const user = ctx.user();
  const instructions = parseProppatch(await readBody(ctx.req));
  const { tree, props } = ctx.services;
  const resource = await tree.tryStat(user, ctx.path);
  if (!resource) throw new DavStatusError(404, 'no such resource');
  // A star is the caller's own mark, not a change to the node: reading it is enough (the store's
  // rule for `starred`), so a PROPPATCH of oc:favorite alone needs no write and takes no lock.
  const starOnly = instructions.length > 0 && instructions.every((i) => isFavorite(i.name));
  if (!starOnly) {
    await requirePrivilege(ctx, resource, 'write');
    await checkWrite(ctx, { path: resource.path, resource, chain: resource.chain });
  }

  // One outcome per property name, in the order first named; a later instruction for the same
  // name replaces the earlier one's effect (RFC 4918 §9.2: instructions apply in document order).
  const outcomes = new Map<string, Outcome>();
  for (const instruction of instructions) {
    const key = propKey(instruction.name);
    const status = statusOf(instruction, resource.entry.checksums);
    const previous = outcomes.get(key);
    if (previous === undefined) outcomes.set(key, { name: instruction.name, op: instruction.op, status });
    else {
      previous.op = instruction.op;
      if (previous.status === 200) previous.status = status;
    }
  }

  const node = resource.chain[resource.chain.length - 1] as string;
  const mark = skipTrashOf(instructions);
  const markOutcome = outcomes.get(propKey(SKIP_TRASH));
  if (mark !== undefined && markOutcome) {
    if (mark === 'invalid' || resource.entry.kind !== 'folder') markOutcome.status = 409;
    else await requirePrivilege(ctx, resource, 'delete', STORE_GUARDS);
  }
  const star = favoriteOf(instructions);
  const starOutcome = outcomes.get(propKey(OC_FAVORITE));
  // Only a node can be starred: not the root, a made-up collection or a drive itself.
  if (star !== undefined && starOutcome) starOutcome.status = star === 'invalid' ? 409 : resource.kind === 'node' ? starOutcome.status : 403;
  let previousStar: boolean | undefined;
  if (typeof star === 'boolean' && starOutcome && [...outcomes.values()].every((o) => o.status === 200)) {
    // The store decides who may star what (it needs `read`): its refusal is the property's 403, nothing changed.
    try {
      await tree.setStarred(user, resource, star);
      previousStar = resource.entry.isStarred;
    } catch (err) {
      if (!(err instanceof StoreError) || (err.kind !== 'forbidden' && err.kind !== 'not-found')) throw err;
      starOutcome.status = 403;
    }
  }
  let previousMark: boolean | undefined;
  if (typeof mark === 'boolean' && markOutcome && [...outcomes.values()].every((o) => o.status === 200)) {
    // The store takes the mark first: a refusal there leaves everything as it was.
    const outcome = await tree.setSkipTrash(user, resource, mark);
    previousMark = outcome.previous;
    if (outcome.status !== 200) markOutcome.status = outcome.status;
    // The mark refused: the star goes back, nothing of this PROPPATCH is applied.
    if (outcome.status !== 200 && previousStar !== undefined && previousStar !== star) await tree.setStarred(user, resource, previousStar);
  }
  if ([...outcomes.values()].every((o) => o.status === 200)) {
    try {
      await props.apply(node, instructions.map(toChange), budgetOwnerOf(user, resource));
      const mtime = finalMtime(instructions);
      if (mtime === 'clear') await props.clearMtime(node);
      else if (mtime !== undefined) await props.setMtime(node, mtime);
    } catch (err) {
      if (!(err instanceof DeadPropertyLimitError)) throw err;
      // The mark goes back to what it was: nothing of this PROPPATCH is applied.
      if (previousMark !== undefined) await tree.setSkipTrash(user, resource, previousMark);
      if (previousStar !== undefined && previousStar !== star) await tree.setStarred(user, resource, previousStar);
      ctx.log.info({ limit: err.kind, owner: budgetOwnerOf(user, resource) }, 'PROPPATCH refused: dead property limit');
      // Nothing was stored: the properties being set could not fit (507, RFC 4918 §9.2.1).
      for (const o of outcomes.values()) o.status = o.op === 'set' ? 507 : 424;
    }
  } else {
    for (const o of outcomes.values()) if (o.status === 200) o.status = 424;
  }

  const writer = new MultistatusWriter();
  const groups = new Map<number, PropName[]>();
  for (const o of outcomes.values()) {
    const group = groups.get(o.status);
    if (group) group.push(o.name);
    else groups.set(o.status, [o.name]);
  }
  const href = ctx.hrefBase + encodeHref(ctx.target.rawSegments, { collection: resource.entry.kind === 'folder', nfd: ctx.nfd });
  writer.addPropstats(
    href,
    [...groups].map(([status, names]) => ({
      status,
      props: names.map((name) => ({ name })),
      ...(status === 403 ? { errorXml: errorXml('cannot-modify-protected-property') } : {}),
    })),
  );
  sendXml(ctx, 207, writer.toString());
};

/**
 * The dead property change of an instruction. DAV:lastmodified and oc:checksums are never kept:
 * they remove what a release before issue 22 stored under their names.
 */
function toChange(instruction: PropPatchInstruction): DeadPropertyChange {
  const { ns, local } = instruction.name;
  if (isLastModified(instruction.name) || isOcChecksums(instruction.name) || isFavorite(instruction.name)) return { op: 'remove', ns, local };
  return instruction.op === 'set' ? { op: 'set', ns, local, xml: instruction.xml } : { op: 'remove', ns, local };
}

/**
 * The client mtime after the instructions: the last date set through an mtime property wins;
 * removing one forgets the client mtime (getlastmodified falls back to the store's time).
 */
function finalMtime(instructions: readonly PropPatchInstruction[]): number | 'clear' | undefined {
  let mtime: number | 'clear' | undefined;
  for (const instruction of instructions) {
    const lastModified = isLastModified(instruction.name);
    if (!lastModified && !isMtimeProperty(instruction.name)) continue;
    if (instruction.op === 'remove') mtime = 'clear';
    else {
      const ms = lastModified ? parseLastModified(instruction.text) : parseDateProperty(instruction.text);
      if (ms !== undefined) mtime = ms;
    }
  }
  return mtime;
}
