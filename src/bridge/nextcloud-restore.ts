/**
 * Nextcloud's restore endpoints, for Cyberduck and Mountain Duck (docs/client-quirks.md §5;
 * Nextcloud's files_versions and files_trashbin Sabre trees): two spaces of
 * `/remote.php/dav/<space>/<user>/`, each a method -> handler table a router registers.
 *
 * - `versions`: `versions/<fileid>` (the numeric id, or the node's UUID) is the file's revisions (PROPFIND Depth 0/1), each child a
 *   revision (PROPFIND, GET, HEAD); MOVE of a child to `/remote.php/dav/versions/<user>/restore/
 *   <any name>` makes it the file's newest revision (201; Nextcloud's RestoreFolder). Served by
 *   the `/versions/` view at the file's drive path (versions-view.ts), so names, properties and
 *   access are that view's: a revision is named by its time there and here alike.
 * - `trashbin`: `trash/...` is the caller's own `/trash` (PROPFIND with the nc:trashbin-*
 *   properties, GET, HEAD, DELETE for good); MOVE of an entry to `/remote.php/dav/trashbin/
 *   <user>/restore/<any name>` puts it back where it was deleted from (201).
 *
 * Each handler delegates to the drive's own verbs with the request's lookup path replaced, the
 * hrefs it writes keep the client's URL (they come from the request target, and a router's href
 * base). `<user>` must be the caller's login name (ASCII case-insensitively, as the store compares
 * usernames); anything else is 404. The request target may be the whole path or, behind a router,
 * the part below `<user>` (requestPlace). No store call but those the delegated verbs make, and
 * the file's path for `versions/<fileid>`.
 */
import { DavStatusError } from './dav-errors.js';
import { parseDestination } from './href.js';
import { isSameUsername } from './remote-dav.js';
import { toDavPath, type DavPath } from './store-tree.js';
import type { DavContext, VerbHandler } from './request/context.js';
import { driveHandlers } from './handlers.js';
import { options } from './verbs/options.js';
import { restoreFromTrash } from './verbs/move.js';
import { sendEmpty } from './request/respond.js';
import { checkLocks, requirePrivilege, STORE_GUARDS } from './request/preconditions.js';

const PREFIX = ['remote.php', 'dav'] as const;

/** Where a request lies in a space: the segments below `/remote.php/dav/<space>/<user>/`. */
interface SpacePlace {
  space: string;
  rest: readonly string[];
}

/** The space and the segments below `<user>` of decoded `segments`, when they name the caller's; undefined otherwise. */
function placeOf(segments: readonly string[], caller: string): SpacePlace | undefined {
  if (segments.length < 4 || segments[0] !== PREFIX[0] || segments[1] !== PREFIX[1]) return undefined;
  const owner = segments[3] as string;
  if (!isSameUsername(owner, caller)) return undefined;
  return { space: segments[2] as string, rest: segments.slice(4) };
}

function notFound(): DavStatusError {
  return new DavStatusError(404, 'no such resource');
}

/**
 * The request's segments below `/remote.php/dav/<space>/<user>/` (the router, remote-dav.ts, has
 * checked that `<user>` is the caller and made the path below it the request's target); 404
 * when the request came through another space.
 */
function requestPlace(ctx: DavContext, space: string): readonly string[] {
  if (ctx.route?.space !== space) throw notFound();
  ctx.user();
  return ctx.target.segments;
}

/** Whether the Destination names `/remote.php/dav/<space>/<caller>/restore/<name>`. */
function restoresTo(ctx: DavContext, space: string): boolean {
  const raw = ctx.req.headers.destination;
  if (typeof raw !== 'string' || raw.trim() === '') return false;
  const parsed = parseDestination(raw, ctx.hosts);
  if (parsed.kind !== 'local') return false;
  const place = placeOf(parsed.path.segments, ctx.user().name);
  return place !== undefined && place.space === space && place.rest.length === 2 && place.rest[0] === 'restore';
}

/** The drive's verb for this method, run at `path` (hrefs still follow the request's URL). */
function delegate(ctx: DavContext, path: DavPath): Promise<void> {
  const verb = driveHandlers[ctx.method];
  if (!verb) throw new DavStatusError(405, `${ctx.method} is not served here`);
  const moved: DavContext = Object.create(ctx, { path: { value: path, enumerable: true } }) as DavContext;
  return verb(moved);
}

/** `versions/<fileid>[/<revision name>]` -> `/versions/<file's drive path>[/<name>]`; 404 for anything else. */
async function versionsPath(ctx: DavContext, rest: readonly string[]): Promise<DavPath> {
  if (rest[0] !== 'versions' || rest.length < 2 || rest.length > 3) throw notFound();
  // The number Nextcloud's clients know the file by (oc:fileid, or its oc:id), or the UUID earlier releases showed.
  const node = await ctx.services.fileIds.nodeOf(ctx.user(), rest[1] as string);
  const file = node === undefined ? undefined : await ctx.services.tree.pathOfNode(ctx.user(), node);
  if (file === undefined) throw notFound();
  return toDavPath(['versions', ...file.slice(1).split('/'), ...rest.slice(2)]);
}

const READS = ['PROPFIND', 'GET', 'HEAD'] as const;

async function versionsVerb(ctx: DavContext): Promise<void> {
  const rest = requestPlace(ctx, 'versions');
  const path = await versionsPath(ctx, rest);
  if ((READS as readonly string[]).includes(ctx.method)) return delegate(ctx, path);
  if (ctx.method === 'MOVE' && rest.length === 3 && restoresTo(ctx, 'versions')) {
    const user = ctx.user();
    const { tree } = ctx.services;
    const source = await tree.stat(user, path);
    // The file the revision belongs to: the view's parent collection names it in the drive.
    const filePath = toDavPath(path.slice(1).split('/').slice(1, -1));
    const target = await tree.stat(user, filePath);
    // As a COPY onto the file would be checked: write on it, and its locks.
    await requirePrivilege(ctx, target, 'write', STORE_GUARDS);
    await checkLocks(ctx, target.chain);
    await tree.copyRevision(user, source, filePath);
    sendEmpty(ctx, 201);
    return;
  }
  throw new DavStatusError(ctx.method === 'MOVE' ? 403 : 405, `${ctx.method} is not served on versions`);
}

async function trashbinVerb(ctx: DavContext): Promise<void> {
  const rest = requestPlace(ctx, 'trashbin');
  if (rest[0] !== 'trash') throw notFound();
  const path = toDavPath(['trash', ...rest.slice(1)]);
  if (ctx.method === 'MOVE') {
    if (!restoresTo(ctx, 'trashbin')) throw new DavStatusError(403, 'a trash entry is restored by a MOVE to restore/');
    return restoreFromTrash(Object.create(ctx, { path: { value: path, enumerable: true } }) as DavContext);
  }
  if ((READS as readonly string[]).includes(ctx.method) || ctx.method === 'DELETE') return delegate(ctx, path);
  throw new DavStatusError(405, `${ctx.method} is not served on the trash bin`);
}

function table(verb: VerbHandler, methods: readonly string[]): Record<string, VerbHandler> {
  return Object.fromEntries(methods.map((m) => [m, verb]));
}

/** The two spaces' method tables, registered in remote-spaces.ts. */
export const NEXTCLOUD_RESTORE_SPACES: Readonly<Record<'versions' | 'trashbin', Readonly<Record<string, VerbHandler>>>> = {
  versions: { ...table(versionsVerb, ['PROPFIND', 'GET', 'HEAD', 'MOVE']), OPTIONS: options },
  trashbin: { ...table(trashbinVerb, ['PROPFIND', 'GET', 'HEAD', 'DELETE', 'MOVE']), OPTIONS: options },
};
