/**
 * MKCOL (RFC 4918 §9.3): creates a collection through new_dir. The top-level folders are fixed:
 * a new name directly under `/` (or at a fixed level of `/webdrive/` and `/groups/`) is refused. What happens to the new folder is the store's
 * business (it refuses folders inside the trash and the virtual folders: 403).
 */
import { DavStatusError } from '../dav-errors.js';
import { readBody, DavXmlError } from '../dav-xml.js';
import { isFixedPath } from '../store-tree.js';
import type { DavContext, VerbHandler } from '../request/context.js';
import { DAV_METHODS } from './options.js';
import { sendEmpty, sendSabreError } from '../request/respond.js';
import { nodeHeaders } from '../commit.js';
import { checkWrite, requirePrivilege, STORE_GUARDS, writeTargetOf } from '../request/preconditions.js';

/**
 * True when the request carries a body. A chunked body is read to its end to learn whether it
 * is empty; any byte means a body (none is defined for MKCOL).
 */
async function hasBody(ctx: DavContext): Promise<boolean> {
  const length = ctx.req.headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  if (ctx.req.headers['transfer-encoding'] === undefined) return false;
  try {
    await readBody(ctx.req, 0);
    return false;
  } catch (err) {
    if (err instanceof DavXmlError && err.kind === 'too-large') return true;
    throw err;
  }
}

/**
 * 201 Created; 415 for a request body (§9.3: a body the server does not understand; litmus
 * mkcol_with_body); 405 (with Allow) when something exists at the URL, the root and the
 * top-level folders included; 403 for a new name directly under `/`; 409 when the parent is
 * missing or is not a collection (rclone then creates the parents: docs/client-quirks.md §3); 412/423
 * from the If header and locks (a depth-infinity lock on the parent needs its token). The 201
 * carries the new folder's ETag, OC-ETag and OC-FileId (commit.ts nodeHeaders).
 */
export const mkcol: VerbHandler = async (ctx) => {
  const user = ctx.user();
  if (await hasBody(ctx)) throw new DavStatusError(415, 'MKCOL takes no request body');
  const target = await writeTargetOf(ctx, ctx.path);
  if (!target.resource) await requirePrivilege(ctx, target.parent, 'write', STORE_GUARDS);
  await checkWrite(ctx, target);
  if (target.resource) {
    const allow = { Allow: DAV_METHODS.filter((m) => m !== 'MKCOL').join(', ') };
    // Under /remote.php/dav/files/<user>/, Sabre's words: Nextcloud clients match them.
    if (ctx.route) {
      sendSabreError(ctx, 405, 'The resource you tried to create already exists', allow);
      return;
    }
    throw new DavStatusError(405, 'a resource exists at this URL', undefined, allow);
  }
  if (isFixedPath(ctx.path)) throw new DavStatusError(403, 'top-level folders are fixed');
  await ctx.services.tree.mkdir(user, ctx.path);
  const made = await ctx.services.tree.tryStat(user, ctx.path);
  sendEmpty(ctx, 201, made ? await nodeHeaders(ctx, made) : {});
};
