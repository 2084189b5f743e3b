/**
 * `/versions/`: a read-only view of every kept revision, mirroring the drive (docs/bridge-design.md
 * "Versions and trash"). `/versions/home/docs/` lists what `/home/docs/` holds, its folders as
 * folders and each file as a folder named like it; `/versions/home/docs/report.odt/` lists that
 * file's revisions as files named by their time (`2026-11-28T10.15.00Z report.odt`: sortable, no
 * `:` for Windows), with the revision's size, time and checksums. Group drives are under
 * `/versions/groups/<name>/home/...`. GET of a revision serves its bytes; COPY of one onto its
 * file restores it (StoreTree.copyRevision); nothing can be written here (virtual: 403).
 *
 * This module holds the view's names and ids (pure); its collections are kinds in
 * tree/versions.ts, which read the drive through the listings the tree caches and the revisions
 * through the store's revision listing (docs/extensions.md "Trash and revisions from a client");
 * over a store without that extension a file's folder is empty. `/versions/` is never listed in
 * the root for a sync tool (listsVersions: Finder and Explorer only), so `rclone sync` of `/`
 * copies no revision.
 *
 * Ids, also the keys of locks and dead properties (none can be set here): `versions:<user>`
 * (`/versions/`), `versions-groups:<user>`, `versions-group:<group>`, `versions-of:<folder id>`
 * (a mirrored folder), `revisions-of:<file id>` (a file's revisions), `revision:<n>:<file id>`.
 */
import type { NodeId, RevisionEntry } from '../store-client/contract.js';

export const VERSIONS = 'versions';

/** Id prefixes: `/versions/`, its `groups`, one group's, a mirrored folder, a file's revisions, one revision. */
export const VERSIONS_ROOT_PREFIX = 'versions:';
export const VERSIONS_GROUPS_PREFIX = 'versions-groups:';
export const VERSIONS_GROUP_PREFIX = 'versions-group:';
export const MIRROR_PREFIX = 'versions-of:';
export const REVISIONS_PREFIX = 'revisions-of:';
export const REVISION_PREFIX = 'revision:';
const PREFIXES = [VERSIONS_ROOT_PREFIX, VERSIONS_GROUPS_PREFIX, VERSIONS_GROUP_PREFIX, MIRROR_PREFIX, REVISIONS_PREFIX, REVISION_PREFIX];

/** Whether an id is one of this view's (a collection or a revision). */
export function isVersionsId(id: string): boolean {
  return PREFIXES.some((p) => id.startsWith(p));
}

/** The file and revision number a revision's id names; undefined for any other id. */
export function revisionOfId(id: string): { file: NodeId; revision: number } | undefined {
  if (!id.startsWith(REVISION_PREFIX)) return undefined;
  const rest = id.slice(REVISION_PREFIX.length);
  const colon = rest.indexOf(':');
  const revision = Number(rest.slice(0, colon));
  if (colon <= 0 || !Number.isSafeInteger(revision)) return undefined;
  return { file: rest.slice(colon + 1) as NodeId, revision };
}

/** The id of the collection listing a file's revisions (also the cache key of that listing). */
export function revisionsIdOf(file: NodeId): string {
  return `${REVISIONS_PREFIX}${file}`;
}

export function versionsRootId(userId: string): NodeId {
  return `${VERSIONS_ROOT_PREFIX}${userId}` as NodeId;
}

/** Finder (WebDAVFS) and Explorer (WebClient) are shown `/versions/` in the root; sync tools are not. */
export function listsVersionsTo(userAgent: string | undefined): boolean {
  return userAgent !== undefined && (/\bWebDAVFS\//.test(userAgent) || /Microsoft-WebDAV-MiniRedir/i.test(userAgent));
}

const TWO = (n: number): string => String(n).padStart(2, '0');

/** `2026-11-28T10.15.00Z` (with `.mmm` when `withMs`): UTC, sortable, no `:`. */
function stamp(ms: number, withMs: boolean): string {
  const d = new Date(Number.isFinite(ms) ? ms : 0);
  const base = `${d.getUTCFullYear()}-${TWO(d.getUTCMonth() + 1)}-${TWO(d.getUTCDate())}T${TWO(d.getUTCHours())}.${TWO(d.getUTCMinutes())}.${TWO(d.getUTCSeconds())}`;
  return withMs ? `${base}.${String(d.getUTCMilliseconds()).padStart(3, '0')}Z` : `${base}Z`;
}

/**
 * The names of a file's revisions: `<time> <file name>`, each distinct. Revisions made in one
 * second show milliseconds; in one millisecond too, the revision number (`… r7 report.odt`).
 */
export function revisionNames(fileName: string, revisions: readonly RevisionEntry[]): string[] {
  const seconds = new Map<string, number>();
  const millis = new Map<string, number>();
  for (const r of revisions) {
    const s = stamp(r.createdMs, false);
    seconds.set(s, (seconds.get(s) ?? 0) + 1);
    const m = stamp(r.createdMs, true);
    millis.set(m, (millis.get(m) ?? 0) + 1);
  }
  return revisions.map((r) => {
    const s = stamp(r.createdMs, false);
    if ((seconds.get(s) ?? 0) < 2) return `${s} ${fileName}`;
    const m = stamp(r.createdMs, true);
    return (millis.get(m) ?? 0) < 2 ? `${m} ${fileName}` : `${m} r${r.revision} ${fileName}`;
  });
}

/** The id of a revision, as the view lists it. */
export function revisionId(file: NodeId, revision: number): NodeId {
  return `${REVISION_PREFIX}${revision}:${file}` as NodeId;
}
