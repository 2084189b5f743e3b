/**
 * The spaces of `/remote.php/dav/<space>/<user>/` the bridge serves (remote-dav.ts maps the
 * URL): each space is one entry, its method -> handler table. `files` is the drive in the
 * client's view (every verb, hrefs under the space's prefix, a new item at a fixed level refused
 * in Sabre's words: withDrivesOnlyRefusal below); `uploads` is Nextcloud chunking (uploads/nextcloud.ts); `tus` holds
 * tus uploads, created by a POST to a drive folder (uploads/tus.ts); `bulk` (no `<user>`
 * segment: the caller's) takes Nextcloud's bulk upload POST (uploads/bulk.ts);
 * `versions` and `trashbin` are Nextcloud's restore endpoints (nextcloud-restore.ts).
 * A method a space lacks is 405; an unknown space 404.
 */
import { NEXTCLOUD_RESTORE_SPACES } from './nextcloud-restore.js';
import { nextcloudUploadHandlers } from './uploads/nextcloud.js';
import { tusHandlers } from './uploads/tus.js';
import { bulkHandlers } from './uploads/bulk.js';
import { driveHandlers } from './handlers.js';
import { options } from './verbs/options.js';
import { search } from './verbs/search.js';
import { DavStatusError } from './dav-errors.js';
import { parseDestination, type DavPathParts } from './href.js';
import { filesPathOf } from './remote-dav.js';
import type { DavContext, VerbHandler } from './request/context.js';
import { sendSabreError } from './request/respond.js';
import { isFixedPath, type DavPath } from './store-tree.js';

/**
 * withDrivesOnlyRefusal: the refusal of a new item at a fixed level of the client's view (tree/client-view.ts): its
 * root, `groups/` and `groups/<name>/` hold drives only. The verbs refuse such a write with 403
 * already (the levels are fixed on `/` as well); under `/remote.php/dav/files/<user>/` and
 * `/remote.php/webdav/` the refusal carries Sabre's body, whose `s:message` the Nextcloud and
 * ownCloud desktop clients append to the error they show (libsync's errorStringParsingBody /
 * extractErrorMessage), so the person reads where files go. The view's root and those levels
 * carry oc:permissions without C and K, so a client does not try in the first place.
 */
export const ONLY_DRIVES_MESSAGE = 'Only drives live here: put files in home/';

/** The verbs that can make a new item, and where: the request's path, or its Destination. */
const WRITES: ReadonlySet<string> = new Set(['PUT', 'MKCOL', 'LOCK', 'POST']);
const TRANSFERS: ReadonlySet<string> = new Set(['MOVE', 'COPY']);

/** The drive path a write of this request would create, when it is one of those verbs. */
function writtenPath(ctx: DavContext): DavPathParts | undefined {
  if (WRITES.has(ctx.method)) return ctx.target;
  if (!TRANSFERS.has(ctx.method)) return undefined;
  const raw = ctx.req.headers.destination;
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  const parsed = parseDestination(raw, ctx.hosts);
  const user = ctx.maybeUser;
  return parsed.kind === 'local' && user ? filesPathOf(parsed.path, user.name) : undefined;
}

/** `handlers` with a 403 for a write at a fixed level answered in Sabre's shape with ONLY_DRIVES_MESSAGE. */
export function withDrivesOnlyRefusal(handlers: Readonly<Record<string, VerbHandler>>): Record<string, VerbHandler> {
  return Object.fromEntries(
    Object.entries(handlers).map(([method, handler]): [string, VerbHandler] => [
      method,
      WRITES.has(method) || TRANSFERS.has(method)
        ? async (ctx) => {
            try {
              await handler(ctx);
            } catch (err) {
              const path = err instanceof DavStatusError && err.status === 403 && !ctx.res.headersSent ? writtenPath(ctx) : undefined;
              if (path === undefined || !isFixedPath(path.path as DavPath)) throw err;
              sendSabreError(ctx, 403, ONLY_DRIVES_MESSAGE);
            }
          }
        : handler,
    ]),
  );
}

export const REMOTE_SPACES: Readonly<Record<string, Readonly<Record<string, VerbHandler>>>> = {
  files: withDrivesOnlyRefusal(driveHandlers),
  uploads: nextcloudUploadHandlers,
  tus: tusHandlers,
  bulk: bulkHandlers,
  ...NEXTCLOUD_RESTORE_SPACES,
};

/** `/remote.php/dav/` itself (remote-dav.ts `dav-root`): Nextcloud's SEARCH arbiter, and OPTIONS saying so; any other method 404. */
export const DAV_ROOT_HANDLERS: Readonly<Record<string, VerbHandler>> = { SEARCH: search, OPTIONS: options };

export const REMOTE_SPACE_NAMES: ReadonlySet<string> = new Set(Object.keys(REMOTE_SPACES));
