/**
 * SEARCH (RFC 5323, DAV:basicsearch) in Nextcloud's dialect (docs/client-quirks.md "SEARCH"):
 * what the Nextcloud mobile apps and the `webdav` npm client send. The arbiter is the DAV root
 * `/remote.php/dav/` (Nextcloud's) or any collection; the scope names a folder as
 * `/files/<user>/...` (relative to `/remote.php/dav/`, the apps' form), a full
 * `/remote.php/dav/files/<user>/...` href, or a path of the bridge's own tree. The conditions
 * become one query of the store's search extension (answered from its name index, never a walk);
 * the answer is a 207 multistatus with the selected properties of each hit, written as PROPFIND
 * writes them, hrefs in the scope's view.
 *
 * Refusals: a body that is not XML, another grammar, an operator or a limit it cannot read: 400;
 * a property it cannot search or order by, or a literal it cannot read: 422 (both with
 * DAV:search-grammar-supported); a scope that is no folder of the caller: 400
 * DAV:search-scope-valid. A store without the extension: 501.
 * More hits than the page holds when the client set no smaller limit: a 507 response for the
 * scope (RFC 5323 §5.18 "result truncation"), which the `webdav` client reports as `truncated`.
 */
import { StoreError, type NodeId, type SearchCondition, type SearchQuery } from '../../store-client/contract.js';
import { DavStatusError } from '../dav-errors.js';
import { DAV_NS, parseSearchRequest, readBody, type DavSearchCondition, type PropName, type SearchRequest } from '../dav-xml.js';
import { encodeHref, parseDestination } from '../href.js';
import { routeRemoteDav } from '../remote-dav.js';
import type { DavContext, VerbHandler } from '../request/context.js';
import { XML_TYPE } from '../request/respond.js';
import { withClientView, type BridgeUser } from '../sessions.js';
import { segmentsOf, toDavPath, type DavPath, type Resource } from '../store-tree.js';
import { NC_NS, OC_NS, writeResources, type AnsweredResource } from './propfind.js';

/** Hits per answer when the client names no limit (Nextcloud's default), and at most. */
export const SEARCH_DEFAULT_RESULTS = 100;
export const SEARCH_MAX_RESULTS = 1000;
/** Operators per query at most (Nextcloud's FileSearchBackend::OPERATOR_LIMIT). */
const OPERATOR_LIMIT = 100;

const FILES_SPACE: ReadonlySet<string> = new Set(['files']);
/** Namespaces the apps put their properties in: ownCloud's, Nextcloud's, and android-library's `xmlns:oc` (NcSearchMethod). */
const CLIENT_NS: ReadonlySet<string> = new Set([OC_NS, NC_NS, 'http://nextcloud.com/ns']);

function unsupported(message: string): DavStatusError {
  return new DavStatusError(422, message, 'search-grammar-supported');
}

/** Which searchable property a name is; undefined for one SEARCH cannot search. */
function searchable(prop: PropName): 'name' | 'mime' | 'updated' | 'size' | 'favorite' | 'fileid' | 'kind' | undefined {
  if (prop.ns === DAV_NS) {
    switch (prop.local) {
      case 'displayname':
        return 'name';
      case 'getcontenttype':
        return 'mime';
      case 'getlastmodified':
      case 'creationdate':
        return 'updated';
      case 'getcontentlength':
        return 'size';
      case 'resourcetype':
        return 'kind';
      default:
        return undefined;
    }
  }
  if (!CLIENT_NS.has(prop.ns)) return undefined;
  switch (prop.local) {
    case 'size':
      return 'size';
    case 'favorite':
      return 'favorite';
    case 'fileid':
    case 'id':
      return 'fileid';
    case 'upload_time':
      return 'updated';
    default:
      return undefined;
  }
}

/** A date literal: seconds since the epoch (the apps' `lt` timestamps), or an ISO 8601 / HTTP date. */
function dateOf(literal: string): number {
  const text = literal.trim();
  if (/^\d{1,12}$/.test(text)) return Number(text) * 1000;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw unsupported(`'${text}' is not a date`);
  return ms;
}

function countOf(literal: string): number {
  const text = literal.trim();
  if (!/^\d{1,15}$/.test(text)) throw unsupported(`'${text}' is not a non-negative integer`);
  return Number(text);
}

/** The store's condition of a DAV:where operator. */
export function toStoreCondition(c: DavSearchCondition, budget = { left: OPERATOR_LIMIT }): SearchCondition {
  if (--budget.left < 0) throw new DavStatusError(400, `more than ${OPERATOR_LIMIT} search operators`, 'search-grammar-supported');
  switch (c.op) {
    case 'and':
      return { and: c.of.map((x) => toStoreCondition(x, budget)) };
    case 'or':
      return { or: c.of.map((x) => toStoreCondition(x, budget)) };
    case 'not':
      return { not: toStoreCondition(c.of, budget) };
    case 'is-collection':
      return { kind: 'folder' };
    case 'is-defined': {
      const kind = searchable(c.prop);
      if (kind === undefined) throw unsupported(`{${c.prop.ns}}${c.prop.local} cannot be searched`);
      // Every searchable property is defined on every node, except a folder's content type and length.
      return kind === 'mime' || (kind === 'size' && c.prop.ns === DAV_NS) ? { kind: 'file' } : { and: [] };
    }
    default: {
      const kind = searchable(c.prop);
      if (kind === undefined) throw unsupported(`{${c.prop.ns}}${c.prop.local} cannot be searched`);
      const { op, literal } = c;
      if (op === 'like' && kind !== 'name' && kind !== 'mime') throw unsupported(`like applies to displayname and getcontenttype only`);
      switch (kind) {
        case 'name':
          if (op === 'like') return { name: literal };
          if (op !== 'eq') throw unsupported('displayname takes eq and like');
          // LIKE without a wildcard is a case-insensitive equality; a name holding % or _ is matched as a substring.
          return /[%_]/.test(literal) ? { name_contains: literal } : { name: literal };
        case 'mime':
          if (op !== 'eq' && op !== 'like') throw unsupported('getcontenttype takes eq and like');
          return { mime: literal.trim() };
        case 'updated':
          return { updated: { [op]: dateOf(literal) } };
        case 'size':
          return { size: { [op]: countOf(literal) } };
        case 'favorite': {
          if (op !== 'eq') throw unsupported('favorite takes eq');
          const on = ['1', 'true', 'yes'].includes(literal.trim().toLowerCase());
          return { favorite: on };
        }
        case 'fileid':
          if (op !== 'eq') throw unsupported('fileid takes eq');
          return { file_id: Math.max(1, countOf(literal)) };
        case 'kind':
          throw unsupported('resourcetype cannot be compared: use DAV:is-collection');
      }
    }
  }
}

function orderOf(request: SearchRequest): NonNullable<SearchQuery['order']> {
  return request.orderBy.map(({ prop, descending }) => {
    const kind = searchable(prop);
    const by = kind === 'name' ? 'name' : kind === 'updated' ? 'updated' : kind === 'size' ? 'size' : kind === 'kind' ? 'kind' : undefined;
    if (by === undefined) throw unsupported(`cannot order by {${prop.ns}}${prop.local}`);
    return { by, desc: descending };
  });
}

/** Where the scope is: whose view, the path in it, and the href prefix of its answers. */
interface Scope {
  user: BridgeUser;
  path: DavPath;
  hrefBase: string;
  href: string;
}

/**
 * The scope's href as a path: `/files/<user>/...` is relative to `/remote.php/dav/` (the apps
 * write it so), a `/remote.php/dav/files/<user>/...` or `/remote.php/webdav/...` href is the
 * client's view, anything else the bridge's own tree when the request came there, else a path
 * below the space the request came through.
 */
function scopeOf(ctx: DavContext, href: string): Scope {
  const user = ctx.user();
  const parsed = parseDestination(href, ctx.hosts);
  if (parsed.kind !== 'local') throw new DavStatusError(400, 'the search scope is on another host', 'search-scope-valid');
  let parts = parsed.path;
  const viaDav = ctx.route !== undefined || ctx.hrefBase !== '';
  if (viaDav && parts.segments[0] === 'files') {
    parts = { ...parts, segments: ['remote.php', 'dav', ...parts.segments], rawSegments: ['remote.php', 'dav', ...parts.rawSegments] };
  }
  const remote = routeRemoteDav(parts, user.name, FILES_SPACE);
  if (remote.kind === 'space') return { user: withClientView(user), path: remote.route.rest.path as DavPath, hrefBase: remote.route.hrefBase, href };
  if (remote.kind === 'not-found') throw new DavStatusError(400, 'the search scope is no folder of yours', 'search-scope-valid');
  if (ctx.route) return { user, path: toDavPath([...segmentsOf(ctx.path), ...parts.segments]), hrefBase: ctx.hrefBase, href };
  return { user, path: parts.path as DavPath, hrefBase: '', href };
}

/** The folders the store searches below for a scope resource: none for the root (every drive). */
async function scopeFolders(ctx: DavContext, scope: Scope, resource: Resource): Promise<NodeId[]> {
  if (resource.entry.kind !== 'folder') throw new DavStatusError(400, 'the search scope must be a collection', 'search-scope-valid');
  if (resource.kind === 'root') return [];
  if (resource.kind !== 'virtual') return [resource.entry.id];
  // `groups/` and `groups/<name>/`: the drives below (two levels at most).
  const { tree } = ctx.services;
  const out: NodeId[] = [];
  let level = [resource];
  for (let depth = 0; depth < 2 && level.length > 0; depth++) {
    const members = (await Promise.all(level.map((r) => tree.list(scope.user, r)))).flat();
    for (const m of members) if (m.kind === 'top' && (m.top?.name === 'home' || m.top?.name === 'incoming')) out.push(m.entry.id);
    level = members.filter((m) => m.kind === 'virtual');
  }
  if (out.length === 0) throw new DavStatusError(400, 'the search scope holds no drive', 'search-scope-valid');
  return out.slice(0, 64);
}

export const search: VerbHandler = async (ctx) => {
  ctx.user();
  const request = parseSearchRequest(await readBody(ctx.req));
  if (request.scopes.length === 0) throw new DavStatusError(400, 'a search needs a DAV:scope', 'search-scope-valid');
  if (request.scopes.length > 1) throw new DavStatusError(400, 'one DAV:scope per search', 'search-multiple-scope-supported');
  const scope = scopeOf(ctx, (request.scopes[0] as { href: string }).href);
  const where = request.where && toStoreCondition(request.where);
  const order = orderOf(request);
  const limit = Math.min(request.nresults ?? SEARCH_DEFAULT_RESULTS, SEARCH_MAX_RESULTS);
  const { tree } = ctx.services;
  const resource = await tree.tryStat(scope.user, scope.path);
  if (!resource) throw new DavStatusError(400, 'the search scope does not exist', 'search-scope-valid');
  const folders = await scopeFolders(ctx, scope, resource);
  let result;
  try {
    result = await tree.search(
      scope.user,
      { ...(folders.length > 0 ? { scope: folders } : {}), ...(where ? { where } : {}), order, limit: Math.max(limit, 1), offset: request.firstResult ?? 0 },
      ctx.signal,
    );
  } catch (err) {
    // A store without the search extension (docs/extensions.md "Search"): not a feature here.
    if (err instanceof StoreError && err.kind === 'not-found') throw new DavStatusError(501, 'this store cannot search');
    throw err;
  }
  const hits = limit === 0 ? [] : result.hits;
  const resources = await tree.resourcesOfHits(scope.user, hits.map((hit) => ({ entry: hit, chain: hit.path })));
  const items: AnsweredResource[] = [];
  for (const r of resources) {
    if (!r) continue;
    const segments = segmentsOf(r.path);
    const name = ctx.nfd ? r.entry.name.normalize('NFD') : r.entry.name;
    items.push({ resource: r, href: scope.hrefBase + encodeHref(segments, { collection: r.entry.kind === 'folder', nfd: ctx.nfd }), name });
  }
  const writer = await writeResources({ ...ctx, maybeUser: scope.user, user: () => scope.user }, request.select, items);
  // More hits than a page the client did not choose: RFC 5323 §5.18, a 507 for the scope.
  if (result.more && (request.nresults === undefined || request.nresults > limit)) writer.addStatus(scope.href, 507);
  const body = Buffer.from(writer.toString(), 'utf8');
  ctx.res.writeHead(207, { 'Content-Type': XML_TYPE, 'Content-Length': String(body.length) });
  ctx.res.end(body);
};
