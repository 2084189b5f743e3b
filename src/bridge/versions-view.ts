/**
 * `/versions/`: a read-only view of every kept revision, mirroring the drive (docs/bridge-design.md
 * "Versions and trash"). `/versions/home/docs/` lists what `/home/docs/` holds, its folders as
 * folders and each file as a folder named like it; `/versions/home/docs/report.odt/` lists that
 * file's revisions as files named by their time (`2026-11-28T10.15.00Z report.odt`: sortable, no
 * `:` for Windows), with the revision's size, time and checksums. Group drives are under
 * `/versions/groups/<name>/home/...`. GET of a revision serves its bytes; COPY of one onto its
 * file restores it (StoreTree.copyRevision); nothing can be written here (virtual: 403).
 *
 * It reads the drive through the listings StoreTree caches and the revisions through the store's
 * revision listing (docs/extensions.md "Trash and revisions from a client"); over a store
 * without that extension a file's folder is empty. It never lists `/versions/` in the root for a
 * sync tool (listsVersions: Finder and Explorer only), so `rclone sync` of `/` copies no revision.
 *
 * Ids, also the keys of locks and dead properties (none can be set here): `versions:<user>`
 * (`/versions/`), `versions-groups:<user>`, `versions-group:<group>`, `versions-of:<folder id>`
 * (a mirrored folder), `revisions-of:<file id>` (a file's revisions), `revision:<n>:<file id>`.
 */
import { StoreError, type NodeEntry, type NodeId, type RevisionEntry, type StoreClient, type StoreSession } from '../store-client/contract.js';
import type { Listing, MetadataCache } from './metadata-cache.js';
import { folder } from './namespace.js';
import type { BridgeUser } from './sessions.js';

export const VERSIONS = 'versions';

const ROOT = 'versions:';
const GROUPS = 'versions-groups:';
const GROUP = 'versions-group:';
const MIRROR = 'versions-of:';
const FILE = 'revisions-of:';
const REVISION = 'revision:';
const PREFIXES = [ROOT, GROUPS, GROUP, MIRROR, FILE, REVISION];

/** Whether an id is one of this view's (a collection or a revision). */
export function isVersionsId(id: string): boolean {
  return PREFIXES.some((p) => id.startsWith(p));
}

/** The file and revision number a revision's id names; undefined for any other id. */
export function revisionOfId(id: string): { file: NodeId; revision: number } | undefined {
  if (!id.startsWith(REVISION)) return undefined;
  const rest = id.slice(REVISION.length);
  const colon = rest.indexOf(':');
  const revision = Number(rest.slice(0, colon));
  if (colon <= 0 || !Number.isSafeInteger(revision)) return undefined;
  return { file: rest.slice(colon + 1) as NodeId, revision };
}

/** The id of the collection listing a file's revisions. */
export function revisionsIdOf(file: NodeId): string {
  return `${FILE}${file}`;
}

export function versionsRootId(userId: string): NodeId {
  return `${ROOT}${userId}` as NodeId;
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

export interface VersionsViewOptions {
  client: StoreClient;
  cache: MetadataCache;
  withSession: <T>(user: BridgeUser, call: (session: StoreSession) => Promise<T>) => Promise<T>;
  /** A store folder's listing, as StoreTree caches it. */
  listing: (user: BridgeUser, folder: NodeId) => Promise<Listing>;
  /** `/groups/`: the caller's groups as the namespace names them (ids `group:<uuid>`); undefined without groups. */
  groups: (user: BridgeUser) => Promise<Listing | undefined>;
}

/** A mirrored folder's listing, remembered per listing object of the real folder and its patch count. */
interface Mirror {
  changes: number;
  listing: Listing;
}

export class VersionsView {
  /** Mirrors by the real folder's listing: as fresh as it (the metadata cache keeps it so), one object while it holds. */
  private readonly mirrors = new WeakMap<Listing, Mirror>();

  constructor(private readonly options: VersionsViewOptions) {}

  /**
   * The listing of one of this view's collections. A mirrored folder follows its real folder's
   * cached listing (so a file written a moment ago is there); a file's revisions are cached
   * like a folder, forgotten when this bridge writes the file (forgetFile) and otherwise after
   * the cache's TTL.
   */
  async list(user: BridgeUser, id: NodeId): Promise<Listing> {
    const { cache } = this.options;
    if (id.startsWith(MIRROR)) {
      const real = await this.options.listing(user, id.slice(MIRROR.length) as NodeId);
      const known = this.mirrors.get(real);
      if (known && known.changes === real.changes) return known.listing;
      const entries = real.entries.map((e) => folder(e.kind === 'folder' ? `${MIRROR}${e.id}` : revisionsIdOf(e.id), e.name, e.updatedMs));
      const listing: Listing = { entries, byName: new Map(entries.map((e) => [e.name.normalize('NFC'), e])), changes: 0 };
      this.mirrors.set(real, { changes: real.changes, listing });
      return listing;
    }
    return cache.load(user.userId, id, () => this.entries(user, id));
  }

  /** After a write to a file (a PUT, a save, a restore): its revisions are outdated for every user. */
  forgetFile(file: NodeId): void {
    this.options.cache.forget(revisionsIdOf(file));
  }

  private async entries(user: BridgeUser, id: string): Promise<readonly NodeEntry[]> {
    if (id.startsWith(ROOT)) {
      const tops = [folder(`${MIRROR}home`, 'home'), folder(`${MIRROR}incoming`, 'incoming')];
      const groups = await this.options.groups(user);
      return groups && groups.entries.length > 0 ? [...tops, folder(`${GROUPS}${user.userId}`, 'groups')] : tops;
    }
    if (id.startsWith(GROUPS)) {
      const groups = await this.options.groups(user);
      return (groups?.entries ?? []).map((g) => folder(`${GROUP}${g.id.slice('group:'.length)}`, g.name, g.updatedMs));
    }
    if (id.startsWith(GROUP)) {
      const groupId = id.slice(GROUP.length);
      return [folder(`${MIRROR}home:${groupId}`, 'home'), folder(`${MIRROR}incoming:${groupId}`, 'incoming')];
    }
    if (id.startsWith(FILE)) return this.revisions(user, id.slice(FILE.length) as NodeId);
    throw new Error(`${id} is not a collection of the versions view`);
  }

  /** A file's revisions as files; none over a store without the revision listing. */
  private async revisions(user: BridgeUser, file: NodeId): Promise<NodeEntry[]> {
    let revisions: RevisionEntry[];
    let name: string;
    try {
      [revisions, name] = await this.options.withSession(user, (s) =>
        Promise.all([this.options.client.listRevisions(s, file), this.options.client.details(s, file).then((d) => d.name)]),
      );
    } catch (err) {
      // No such route (a foreign store, edition 1.0), or the file is gone meanwhile: nothing to show.
      if (err instanceof StoreError && (err.kind === 'not-found' || err.httpStatus === 405 || err.httpStatus === 501)) return [];
      throw err;
    }
    const names = revisionNames(name, revisions);
    return revisions.map((r, i) => ({
      id: `${REVISION}${r.revision}:${file}` as NodeId,
      name: names[i] as string,
      kind: 'file',
      sizeBytes: r.sizeBytes,
      updatedMs: r.createdMs,
      revision: r.revision,
      isStarred: false,
      ...(r.checksums ? { checksums: r.checksums } : {}),
    }));
  }
}
