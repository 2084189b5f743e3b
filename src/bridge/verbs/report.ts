/**
 * REPORT (RFC 3253 §3.6), the one report Nextcloud's clients send for files: `oc:filter-files`
 * with `<oc:filter-rules><oc:favorite>1</oc:favorite></oc:filter-rules>` (the web app's Favorites
 * view, @nextcloud/files getFavoritesReport; Nextcloud's FilesReportPlugin), on
 * `/remote.php/dav/files/<user>/[folder/]`: the caller's starred nodes at or below the folder,
 * each where the caller's view shows it, with the properties asked (as PROPFIND answers them:
 * propfind.ts multistatusOf). A starred node the view does not show (one reached only through a
 * share, or in the trash) is left out, as Nextcloud leaves out what is not in the user's folder.
 * Any other report, or other filter rules (system tags), answers 403 with
 * DAV:supported-report, RFC 3253's precondition. Reads only: the store's starred list and the
 * path of each starred node.
 */
import { DavStatusError } from '../dav-errors.js';
import { parseFilterFiles, readBody } from '../dav-xml.js';
import { childHref, encodeHref } from '../href.js';
import { GROUPS } from '../namespace.js';
import { withMacSideFiles } from '../sessions.js';
import { segmentsOf, toDavPath, type DavPath } from '../tree/paths.js';
import type { VerbHandler } from '../request/context.js';
import { sendXml } from '../request/respond.js';
import { multistatusOf, type AnsweredResource } from './propfind.js';

const FAVORITES = toDavPath(['favorites']);
const GROUPS_PATH = toDavPath([GROUPS]);

export const report: VerbHandler = async (ctx) => {
  const user = ctx.user();
  const parsed = parseFilterFiles(await readBody(ctx.req));
  if (!parsed || !parsed.favorite || parsed.otherRules.length > 0) {
    throw new DavStatusError(403, parsed ? 'only the oc:favorite filter is served' : 'only the oc:filter-files report is served');
  }
  const { tree } = ctx.services;
  const target = await tree.tryStat(user, ctx.path);
  if (!target) throw new DavStatusError(404, 'no such resource');

  // The starred list is the account's, whichever view asked (the client's view hides /favorites/).
  const account = withMacSideFiles(user);
  // The caller's own `favorites`, and each group's (`/groups/<name>/favorites/`: the store lists
  // a star on a group's node there, as the web app's Favorites page shows it).
  const groups = await tree.tryStat(account, GROUPS_PATH);
  const groupNames = groups ? (await tree.list(account, groups)).map((g) => g.entry.name) : [];
  const views = [FAVORITES, ...groupNames.map((name) => toDavPath([GROUPS, name, 'favorites']))];
  const starred = (
    await Promise.all(
      views.map(async (path) => {
        const view = await tree.tryStat(account, path);
        return view ? tree.list(account, view) : [];
      }),
    )
  ).flat();
  const base = segmentsOf(ctx.path);
  const paths = await Promise.all(starred.map((r) => tree.pathOfNode(user, r.entry.id)));
  const below = paths.filter((p): p is DavPath => p !== undefined && isBelow(segmentsOf(p), base));
  const resources = (await Promise.all(below.map((p) => tree.tryStat(user, p)))).filter((r) => r !== undefined);

  const selfHref = ctx.hrefBase + encodeHref(ctx.target.rawSegments, { collection: true, nfd: ctx.nfd });
  const answered: AnsweredResource[] = resources.map((resource) => {
    const names = segmentsOf(resource.path).slice(base.length).map((n) => (ctx.nfd ? n.normalize('NFD') : n));
    let href = selfHref;
    names.forEach((name, i) => {
      href = childHref(href, name, { collection: i < names.length - 1 || resource.entry.kind === 'folder' });
    });
    return { resource, href, name: names[names.length - 1] ?? '' };
  });
  sendXml(ctx, 207, (await multistatusOf(ctx, parsed.request, answered)).toString('utf8'));
};

/** Whether `path` lies strictly below `base` (a starred folder is listed, not the folder asked itself). */
function isBelow(path: readonly string[], base: readonly string[]): boolean {
  return path.length > base.length && base.every((name, i) => path[i] === name);
}
