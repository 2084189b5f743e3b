/**
 * LOCK (RFC 4918 §9.10): takes exclusive or shared write locks, refreshes them, and creates an
 * empty file for a LOCK on an unmapped URL (§9.10.4; Finder locks a new file before it writes
 * it: docs/client-quirks.md §1). Lock state lives in the LockStore, keyed by the resource's chain keys
 * (node UUIDs), so a lock taken through one path or by one user holds for every path and user of
 * the node. This handler decides statuses and writes the answer; it keeps no state itself.
 *
 * Fixes over webdav-server 2.6.3 (docs/client-quirks.md §0): scope and type are written in the DAV:
 * namespace, `Lock-Token` carries angle brackets, and the client's Timeout is honoured up to
 * `bridge.lockMaxTimeoutSec` (one hour; `Infinite` gets that).
 *
 * Who may lock (issue 14, finding 4): LOCK needs `write` on the resource it names, `bind`
 * (write on the parent) for an unmapped URL, and a refresh needs `write` again. The root, the
 * virtual collections and the derived views are never locked (requirePrivilege). A
 * depth-infinity lock needs write on the collection only: in this store rights do not narrow
 * going down (a group member's permissions hold for the whole group tree, a writable share for
 * the shared node's subtree), so whoever may write a collection may write everything below it.
 * A read-only user gets 403, never 423: Office then opens the file read-only, Finder and
 * davfs2 report a permission error instead of "locked by someone else".
 */
import { Readable } from 'node:stream';
import { commitWrite } from '../commit.js';
import { DavStatusError } from '../dav-errors.js';
import { lockResponseBody, parseLockInfo, readBody, type LockDescription, type LockInfo } from '../dav-xml.js';
import { LockError, type ActiveLock, type LockDepth } from '../locks.js';
import type { Resource } from '../store-tree.js';
import type { DavContext, VerbHandler } from '../request/context.js';
import { sendXml } from '../request/respond.js';
import { checkHttpConditions, checkIfHeader, hrefOf, ifHeaderOf, requirePrivilege, writeTargetOf, type WriteTarget } from '../request/preconditions.js';
import { headerValue } from '../request/headers.js';

/** Depth of a LOCK (RFC 4918 §9.10.3): 0 or infinity, infinity when absent; anything else is 400. */
function lockDepthOf(ctx: DavContext): LockDepth {
  const raw = headerValue(ctx.req.headers.depth);
  if (raw === undefined) return 'infinity';
  const value = raw.trim().toLowerCase();
  if (value === '0') return '0';
  if (value === 'infinity') return 'infinity';
  throw new DavStatusError(400, `Depth ${JSON.stringify(raw)} is not allowed on LOCK`);
}

function describe(lock: ActiveLock): LockDescription {
  return { token: lock.token, scope: lock.scope, depth: lock.depth, ownerXml: lock.ownerXml, rootHref: lock.rootHref, timeoutSec: lock.timeoutSec };
}

export const lock: VerbHandler = async (ctx) => {
  const user = ctx.user();
  const depth = lockDepthOf(ctx);
  const info = parseLockInfo(await readBody(ctx.req));
  const target = await writeTargetOf(ctx, ctx.path);
  const timeoutHeader = headerValue(ctx.req.headers.timeout);
  if (info === undefined) {
    await refresh(ctx, target, timeoutHeader);
    return;
  }
  const timeoutSec = ctx.services.locks.parseTimeout(timeoutHeader);
  await requirePrivilege(ctx, target.resource ?? target.parent, 'write');

  let resource = target.resource;
  const { locks } = ctx.services;
  if (resource) {
    await checkIfHeader(ctx, target);
    checkHttpConditions(ctx, target);
  } else {
    // Refuse a conflicting lock before the empty file exists, so a refused LOCK leaves nothing;
    // the empty file is written as every file is (commit.ts: If header and locks included).
    await throwOnConflict(ctx, target.chain, info, depth);
    await commitWrite(ctx, user, { path: target.path, door: 'put', sizeBytes: 0, body: () => Readable.from([]) });
    resource = await ctx.services.tree.stat(user, target.path);
  }

  const taken = await locks.lock({
    chain: resource.chain,
    rootHref: rootHrefOf(ctx, resource),
    scope: info.scope,
    depth,
    ownerXml: info.ownerXml,
    principal: user.userId,
    timeoutSec,
  });
  ctx.log.debug({ scope: taken.scope, depth: taken.depth, timeoutSec: taken.timeoutSec, created: !target.resource }, 'lock taken');
  sendXml(ctx, target.resource ? 200 : 201, lockResponseBody([describe(taken)]), { 'Lock-Token': `<${taken.token}>` });
};

/**
 * A LOCK without a body refreshes the lock whose token the If header submits (RFC 4918 §9.10.2;
 * Finder refreshes with `If: (<token>)`). No If header: 400. No submitted token of a lock covering
 * the request URI: 412 with DAV:lock-token-matches-request-uri. Another user's lock: 403. Without
 * a Timeout header the lock gets its previous timeout again, not the server default.
 */
async function refresh(ctx: DavContext, target: WriteTarget, timeoutHeader: string | undefined): Promise<void> {
  const header = ifHeaderOf(ctx);
  if (!header) throw new DavStatusError(400, 'a LOCK without a body is a refresh and needs an If header with the lock token');
  // Holding a lock is a write: someone who lost `write` since cannot keep theirs alive.
  await requirePrivilege(ctx, target.resource, 'write');
  await checkIfHeader(ctx, target);
  const { locks } = ctx.services;
  const covering = new Set(target.resource ? (await locks.locksCovering(target.chain)).map((l) => l.token) : []);
  const token = header.lockTokens.find((t) => covering.has(t));
  if (token === undefined) throw new LockError('no-such-lock', 'no submitted token names a lock on this resource');
  const previous = await locks.get(token);
  const timeoutSec = timeoutHeader === undefined && previous ? previous.timeoutSec : locks.parseTimeout(timeoutHeader);
  const refreshed = await locks.refresh(token, target.chain, timeoutSec, ctx.user().userId);
  sendXml(ctx, 200, lockResponseBody([describe(refreshed)]));
}

/** What LockStore.lock would refuse, checked up front (423 with DAV:no-conflicting-lock). */
async function throwOnConflict(ctx: DavContext, chain: readonly string[], info: LockInfo, depth: LockDepth): Promise<void> {
  const { locks } = ctx.services;
  const inTheWay = await locks.locksCovering(chain);
  if (depth === 'infinity') inTheWay.push(...(await locks.locksBelow(chain[chain.length - 1] as string)));
  const conflicts = info.scope === 'exclusive' ? inTheWay : inTheWay.filter((l) => l.scope === 'exclusive');
  if (conflicts.length > 0) throw new LockError('conflict', 'the resource is locked', conflicts);
}

/** DAV:lockroot as this request named the resource (collections end in `/`). */
function rootHrefOf(ctx: DavContext, resource: Resource): string {
  return hrefOf(ctx, resource.path, resource.entry.kind === 'folder');
}

