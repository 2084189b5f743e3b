/**
 * Write preconditions shared by every verb that changes state (PUT, DELETE, MKCOL, MOVE, COPY,
 * PROPPATCH, LOCK, UNLOCK): the If header (RFC 4918 §10.4; 412 when false), locks (423 with
 * DAV:lock-token-submitted when a lock covering the resource was not submitted, §9.10.6 /
 * §7.5), and HTTP If-Match / If-None-Match (RFC 9110 §13.1; davfs2 sends `If-None-Match: *`
 * on PUT and LOCK of new files and `If-Match: <etag>` on PUT of existing ones).
 *
 * Locks are keyed by the global keys of a resource chain (node UUIDs), so a lock taken by one
 * user or through one path holds for every user and path; a token counts only when presented
 * by the user who took the lock (RFC 4918 §6.4).
 */
import { revisionOfId } from '../versions-view.js';
import { DavStatusError } from '../dav-errors.js';
import { encodeHref, parseHrefTarget } from '../href.js';
import { filesPathOf } from '../remote-dav.js';
import { entityTagsMatch, evaluateIf, parseIfHeader, presentedLockTokens, type IfHeader } from '../if-header.js';
import { isDerivedView, parentOf, type DavPath, type Privilege, type Resource } from '../store-tree.js';
import type { DavContext } from './context.js';
import { headerValue } from './headers.js';

/**
 * Strong entity tag: files change it with every revision; folders with any change anywhere below
 * them when the store publishes tree versions (driveway's: docs/extensions.md "Tree versions and
 * sizes"; the made-up collections derive theirs from their members'), else with every change of
 * their own listing.
 */
export function etagOf(resource: Resource): string {
  const { entry } = resource;
  if (entry.kind === 'file') return `"${entry.id}-${entry.revision ?? `${entry.sizeBytes}-${entry.updatedMs}`}"`;
  const id = resource.kind === 'root' ? 'root' : entry.id;
  return entry.treeEtag !== undefined ? `"${id}-t${entry.treeEtag}"` : `"${id}-${entry.updatedMs}"`;
}

const parsedIf = new WeakMap<DavContext, IfHeader | undefined>();

/** The request's If header, parsed once (IfHeaderError -> 400). */
export function ifHeaderOf(ctx: DavContext): IfHeader | undefined {
  if (parsedIf.has(ctx)) return parsedIf.get(ctx);
  const value = headerValue(ctx.req.headers.if);
  const header = value === undefined || value.trim() === '' ? undefined : parseIfHeader(value);
  parsedIf.set(ctx, header);
  return header;
}

/** The encoded href of a path, as hrefs in this request are written. */
export function hrefOf(ctx: DavContext, path: DavPath, collection = false): string {
  return ctx.hrefBase + encodeHref(path === '/' ? [] : path.slice(1).split('/'), { collection, nfd: ctx.nfd });
}

/** The target of a write: an existing resource, or an unmapped path below an existing parent. */
export interface WriteTarget {
  path: DavPath;
  resource?: Resource;
  /** For an unmapped target: the collection it would be created in, when that exists. */
  parent?: Resource;
  /** Keys root..target; for an unmapped target, the parent's chain plus a key no lock can hold. */
  chain: readonly string[];
}

export async function writeTargetOf(ctx: DavContext, path: DavPath): Promise<WriteTarget> {
  const user = ctx.user();
  const resource = await ctx.services.tree.tryStat(user, path);
  if (resource) return { path, resource, chain: resource.chain };
  const parent = path === '/' ? undefined : await ctx.services.tree.tryStat(user, parentOf(path));
  const base = parent?.chain ?? [`root:${user.userId}`];
  return { path, ...(parent ? { parent } : {}), chain: [...base, `unmapped:${path}`] };
}

/** requirePrivilege's option for an operation the store refuses itself when it must. */
export const STORE_GUARDS = { storeGuards: true } as const;

/**
 * 403 unless the user holds `privilege` on `resource` (node permissions through myaccess, docs/api.md:
 * a group member without `write` may not PUT, MKCOL, PROPPATCH (write-properties), LOCK (write
 * on what it names; for an unmapped URL, bind: write on the parent), MOVE or COPY into a folder;
 * without `delete` may not DELETE; without `download` may not GET). Checked before the If header
 * and locks: no condition or token can make the write allowed. Nothing to check when the resource
 * is not there (the verb answers 404 or 409 itself). `storeGuards`: the operation goes to the
 * store, which refuses it itself when it must; what a store without myaccess could not confirm
 * is then left to it (StoreTree.privileges). Without it (LOCK, PROPPATCH: only the bridge guards
 * them) the privilege must be confirmed.
 */
export async function requirePrivilege(ctx: DavContext, resource: Resource | undefined, privilege: Privilege, options: { storeGuards?: boolean } = {}): Promise<void> {
  if (!resource) return;
  // The root, the virtual collections (`/groups/`, `/groups/<name>/`, `/webdrive/`) and the
  // derived views (`/favorites/`, `/shared_with_you/`, `/public_shares/`, `/private_shares/`)
  // are read by everyone who sees them and written by nobody: a lock or a dead property there
  // would cover nodes of other owners (a read-only group member locking a whole group drive:
  // issue 14, finding 4), and nothing can be created in them.
  if (resource.kind === 'root' || resource.kind === 'virtual' || isDerivedView(resource)) {
    if (privilege === 'read') return;
    // A revision in /versions/ is read from its file, which the store guards (download there).
    if (privilege === 'download' && revisionOfId(resource.entry.id)) return;
    throw new DavStatusError(403, `nothing can be written at ${resource.path}: it is made up or derived`);
  }
  const granted = await ctx.services.tree.privileges(ctx.user(), resource, { exact: true, passedToStore: options.storeGuards ?? false });
  if (!granted.has(privilege)) throw new DavStatusError(403, `the ${privilege} permission is needed here`);
}

/** Evaluates the If header; throws 412 when it is false. */
export async function checkIfHeader(ctx: DavContext, target: WriteTarget): Promise<void> {
  const header = ifHeaderOf(ctx);
  if (!header) return;
  const user = ctx.user();
  const { tree, locks } = ctx.services;
  const requestHref = '\0request';
  const passed = await evaluateIf(header, requestHref, async (href) => {
    let resource: Resource | undefined;
    if (href === requestHref) {
      resource = target.resource;
      if (!resource) return { etag: undefined, lockTokens: (await locks.locksCovering(target.chain)).map((l) => l.token) };
    } else {
      const parsed = parseHrefTarget(href, ctx.hosts);
      if (parsed.kind !== 'local') return undefined;
      // A tag may name the drive through /remote.php/dav/files/<user>/ as well as through /.
      const inDrive = filesPathOf(parsed.path, user.name);
      if (!inDrive) return undefined;
      resource = await tree.tryStat(user, inDrive.path as DavPath);
    }
    if (!resource) return undefined;
    return { etag: etagOf(resource), lockTokens: (await locks.locksCovering(resource.chain)).map((l) => l.token) };
  });
  if (!passed) throw new DavStatusError(412, 'If header condition failed');
}

/**
 * Throws 423 unless every lock covering the target (and, for DELETE/MOVE of a collection,
 * every lock below it) has its token submitted by the user who took it.
 */
export async function checkLocks(ctx: DavContext, chain: readonly string[], options: { includeDescendants?: boolean } = {}): Promise<void> {
  const user = ctx.user();
  const blocking = await ctx.services.locks.blockingLocks(chain, presentedLockTokens(ifHeaderOf(ctx)), {
    principal: user.userId,
    includeDescendants: options.includeDescendants ?? false,
  });
  if (blocking.length > 0) {
    throw new DavStatusError(423, 'resource is locked', 'lock-token-submitted', {}, blocking.map((l) => l.rootHref));
  }
}

/** RFC 9110 §13.1.1/§13.1.2 for writes: If-Match and If-None-Match against the target. */
export function checkHttpConditions(ctx: DavContext, target: WriteTarget): void {
  const ifMatch = ctx.req.headers['if-match'];
  const ifNoneMatch = ctx.req.headers['if-none-match'];
  const etag = target.resource ? etagOf(target.resource) : undefined;
  if (ifMatch !== undefined) {
    const ok = ifMatch.trim() === '*' ? etag !== undefined : etag !== undefined && ifMatch.split(',').some((t) => entityTagsMatch(t.trim(), etag) && !t.trim().startsWith('W/'));
    if (!ok) throw new DavStatusError(412, 'If-Match failed');
  }
  if (ifNoneMatch !== undefined) {
    const matches = ifNoneMatch.trim() === '*' ? etag !== undefined : etag !== undefined && ifNoneMatch.split(',').some((t) => entityTagsMatch(t.trim(), etag));
    if (matches) throw new DavStatusError(412, 'If-None-Match failed');
  }
}

/** All three checks, in the order RFC 4918 implies: If header, HTTP conditions, then locks. */
export async function checkWrite(ctx: DavContext, target: WriteTarget, options: { includeDescendants?: boolean } = {}): Promise<void> {
  await checkIfHeader(ctx, target);
  checkHttpConditions(ctx, target);
  await checkLocks(ctx, target.chain, options);
}
