/**
 * Nextcloud's URL layout, `/remote.php/dav/<space>/<user>/...`, mapped onto the bridge: which
 * space a request (or a Destination, or an If resource tag) names, whose it is, and the path
 * below it. Pure path work over href.ts's decoded segments: it calls no store and knows no verb;
 * server.ts picks the handlers of a space (remote-spaces.ts), the verbs map Destination and If
 * hrefs through `filesPathOf`.
 *
 * `files/<user>/` is the caller's drive as a sync client sees it (the client's view:
 * tree/client-view.ts; `/` keeps the whole tree): rclone's `nextcloud` vendor needs its URL to end
 * in `/remote.php/dav/files/<user>` to find the upload space (docs/client-quirks.md §3), and the
 * Nextcloud and ownCloud clients sync it. `/remote.php/webdav/` is the same view without the
 * `<user>` segment (ownCloud's older URL: owncloudcmd's fallback, GNOME Online Accounts' mount),
 * routed as the `files` space of the caller. `<user>` is the caller's login name compared as the
 * store compares usernames (ASCII case-insensitively, SQLite's NOCASE); any other name is 404,
 * whether that user exists or not.
 *
 * Why the root of `/` cannot collide: it is made up (namespace.ts) and holds no `remote.php`.
 */
import { encodeHref, type DavPathParts } from './href.js';

/** The segments every Nextcloud DAV URL starts with. */
const PREFIX = ['remote.php', 'dav'] as const;
/** ownCloud's older single-space URL: the `files` space of whoever asks. */
const WEBDAV_PREFIX = ['remote.php', 'webdav'] as const;

/** Spaces of the caller without a `<user>` segment: Nextcloud's bulk upload (uploads/bulk.ts). */
const OWNERLESS_SPACES: ReadonlySet<string> = new Set(['bulk']);

/** A request inside one space of one user. */
export interface SpaceRoute {
  space: string;
  /** The `<user>` segment as the client sent it. */
  owner: string;
  /** The path below `/remote.php/dav/<space>/<user>`, `/` for the space's root. */
  rest: DavPathParts;
  /** The encoded href of the space's root as the client wrote it, without a trailing `/`. */
  hrefBase: string;
}

export type RemoteRoute =
  /** Not under `/remote.php/dav/`: the drive as always. */
  | { kind: 'plain' }
  | { kind: 'space'; route: SpaceRoute }
  /** `/remote.php/dav/` itself: Nextcloud's search arbiter (verbs/search.ts) and OPTIONS, nothing else. */
  | { kind: 'dav-root'; hrefBase: string }
  /** Under `/remote.php/dav/` but no space of the caller's: 404, nothing said about why. */
  | { kind: 'not-found'; reason: string };

/** Whether the store would take `a` and `b` for one username (SQLite NOCASE folds ASCII only; PostgreSQL's citext agrees on ASCII names). */
export function isSameUsername(a: string, b: string): boolean {
  return a.length === b.length && a.replace(/[A-Z]/g, (c) => c.toLowerCase()) === b.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

function isUnder(parts: DavPathParts, prefix: readonly string[]): boolean {
  return parts.segments.length >= prefix.length && prefix.every((s, i) => parts.segments[i] === s);
}

/** `parts` below its first `cut` segments. */
function restOf(parts: DavPathParts, cut: number): DavPathParts {
  const segments = parts.segments.slice(cut);
  return {
    segments,
    rawSegments: parts.rawSegments.slice(cut),
    trailingSlash: segments.length === 0 ? true : parts.trailingSlash,
    path: '/' + segments.join('/'),
  };
}

/**
 * Where `parts` leads. `spaces`: the spaces served (unknown ones are 404). `caller`: the
 * authenticated login name; undefined for an anonymous request, whose owner is not checked (the
 * verb answers 401 before it reads anything).
 */
export function routeRemoteDav(parts: DavPathParts, caller: string | undefined, spaces: ReadonlySet<string>): RemoteRoute {
  if (isUnder(parts, WEBDAV_PREFIX)) {
    if (!spaces.has('files')) return { kind: 'not-found', reason: 'no such DAV space' };
    const cut = WEBDAV_PREFIX.length;
    return { kind: 'space', route: { space: 'files', owner: caller ?? '', rest: restOf(parts, cut), hrefBase: encodeHref(parts.rawSegments.slice(0, cut)) } };
  }
  if (!isUnder(parts, PREFIX)) return { kind: 'plain' };
  if (parts.segments.length === PREFIX.length) return { kind: 'dav-root', hrefBase: encodeHref(parts.rawSegments.slice(0, PREFIX.length)) };
  const space = parts.segments[2];
  const owner = parts.rawSegments[3];
  if (space === undefined || !spaces.has(space)) return { kind: 'not-found', reason: 'no such DAV space' };
  // `/remote.php/dav/bulk` names no user: the caller's (its parts' paths are below the caller's files root).
  if (OWNERLESS_SPACES.has(space)) {
    const cut = PREFIX.length + 1;
    return { kind: 'space', route: { space, owner: caller ?? '', rest: restOf(parts, cut), hrefBase: encodeHref(parts.rawSegments.slice(0, cut)) } };
  }
  if (owner === undefined) return { kind: 'not-found', reason: 'a DAV space is per user' };
  if (caller !== undefined && !isSameUsername(owner, caller)) return { kind: 'not-found', reason: "another user's DAV space" };
  const cut = PREFIX.length + 2;
  return { kind: 'space', route: { space, owner, rest: restOf(parts, cut), hrefBase: encodeHref(parts.rawSegments.slice(0, cut)) } };
}

/**
 * A Destination or If href inside the drive: a plain path is the drive itself, and
 * `/remote.php/dav/files/<caller>/...` and `/remote.php/webdav/...` the same drive. Undefined for anything else under
 * `/remote.php/dav/` (another space, another user's files): no resource of the drive.
 */
export function filesPathOf(parts: DavPathParts, caller: string): DavPathParts | undefined {
  const route = routeRemoteDav(parts, caller, FILES_ONLY);
  if (route.kind === 'plain') return parts;
  return route.kind === 'space' ? route.route.rest : undefined;
}

const FILES_ONLY: ReadonlySet<string> = new Set(['files']);
