/**
 * The async core of the bridge: DAV paths -> store operations, through the metadata cache.
 * It speaks DAV words (path, resource, collection) upward and the store API's words (node, dirlist: docs/api.md) only
 * through src/store-client, so it serves any server of the interface. Every method throws
 * StoreError (dav-errors.ts decides the status). It never touches HTTP requests or responses.
 *
 * Paths map to node ids only by walking dirlist folder by folder (the store API has no path lookup):
 * each folder is listed at most once per TTL per user, concurrent lookups share one call, and
 * the bridge's own writes patch or invalidate exactly the folders they change.
 */
import { randomBytes } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../common/logger.js';
import { StoreError, type ByteRange, type Download, type GroupEntry, type NodeEntry, type NodeId, type Removal, type StoreClient, type StoreSession, type UserProfile } from '../store-client/contract.js';
import { normalizeName } from './href.js';
import type { FolderKey, Listing, MetadataCache } from './metadata-cache.js';
import { DERIVED_VIEWS, folder, folder as folderEntry, GROUPS, isTopLevelName, Namespace, siblingTopId, TOP_LEVEL, topLevelOfId, virtualOf, WEBDRIVE, type TopLevelName } from './namespace.js';
import { withMacSideFiles, type BridgeUser } from './sessions.js';
import { ExtensionRoute } from './extension-route.js';
import { KeyedQueue } from '../common/keyed-queue.js';
import { appleDoubleOf, isMacSideFile } from '../common/side-files.js';
import { isVersionsId, revisionOfId, VERSIONS, VersionsView, versionsRootId } from './versions-view.js';

/** A decoded, NFC-normalised path: '/' is the root; no trailing slash otherwise. */
export type DavPath = string & { readonly brand: 'DavPath' };

export { TOP_LEVEL } from './namespace.js';

/** Names the bridge uses for its own bookkeeping inside store folders; never listed. */
export const STAGING_PREFIX = '.driveway-staging-';

export function toDavPath(segments: readonly string[]): DavPath {
  return `/${segments.map((s) => s.normalize('NFC')).join('/')}` as DavPath;
}

export function segmentsOf(path: DavPath): string[] {
  return path === '/' ? [] : path.slice(1).split('/');
}

export function parentOf(path: DavPath): DavPath {
  const segments = segmentsOf(path);
  return toDavPath(segments.slice(0, -1));
}

export function nameOf(path: DavPath): string {
  const segments = segmentsOf(path);
  return segments[segments.length - 1] ?? '';
}

/**
 * `root`: `/`. `virtual`: a collection the bridge makes up (`/webdrive/`, `/groups/`,
 * `/groups/<name>/`). `top`: a top-level folder of the caller or of a group, also when mounted
 * as `/webdrive/<endpoint>/`. `node`: anything the store lists below those.
 */
export type ResourceKind = 'root' | 'virtual' | 'top' | 'node';

export interface Resource {
  path: DavPath;
  kind: ResourceKind;
  entry: NodeEntry;
  /** Folder holding it (absent for the root, virtual collections and the top-level folders). */
  parent?: { id: NodeId; key: FolderKey };
  /** Global keys from the root down to this resource: what locks and dead properties hang on. */
  chain: string[];
  /** The top-level folder it lies in (itself for a top-level folder): `home`, or `home:<group>`. */
  top?: { id: NodeId; name: TopLevelName };
  /**
   * Below `shared_with_you`: the shared node it is (or lies in), whose myaccess says what the
   * user may do here (a private share grants read, or read and write), not the user's own tree.
   */
  shareRoot?: NodeId;
}

/**
 * Whether a path names something fixed, whatever exists there: the root, a top-level folder, or
 * a level of `/webdrive/<endpoint>` or `/groups/<name>/<top>`. Nothing is created, deleted,
 * moved or copied onto such a path.
 */
/**
 * What a member of `parent` inherits: its top-level folder, and the shared node that decides
 * permissions (an entry directly in `shared_with_you` is that node itself).
 */
function inheritFrom(parent: Resource, child: Resource): void {
  if (parent.top) child.top = parent.top;
  if (parent.shareRoot) child.shareRoot = parent.shareRoot;
  else if (parent.kind === 'top' && parent.top?.name === 'shared_with_you') child.shareRoot = child.entry.id;
}

/** The group a top-level id belongs to (`home:<group>`); undefined for the caller's own (`home`). */
function groupOfTop(topId: string | undefined): string | undefined {
  const colon = topId?.indexOf(':') ?? -1;
  return colon === -1 ? undefined : topId?.slice(colon + 1);
}

/** A derived view itself (`/favorites/`, `/shared_with_you/`, a group's): its content lives elsewhere. */
export function isDerivedView(resource: Resource): boolean {
  return resource.kind === 'top' && resource.top !== undefined && DERIVED_VIEWS.has(resource.top.name);
}

/**
 * An entry listed directly in a derived view (a starred node, a shared node, a node with links):
 * someone's node shown here, not held here. Members below such an entry are ordinary nodes.
 */
export function isDerivedViewEntry(resource: Resource): boolean {
  return resource.kind === 'node' && resource.top !== undefined && DERIVED_VIEWS.has(resource.top.name) && resource.parent?.id === resource.top.id;
}

/**
 * Whose budget the bridge's own data about `resource` (dead properties) counts against: the
 * owner of the tree it lies in when the path names it (the caller's own tree: the caller; a
 * group's `…:<group>`: the group), else (reached through a private share: the path does not name
 * the sharer) the caller writing.
 */
export function budgetOwnerOf(user: BridgeUser, resource: Resource): string {
  if (resource.shareRoot !== undefined) return user.userId;
  return groupOfTop(resource.top?.id) ?? user.userId;
}

export function isFixedPath(path: DavPath): boolean {
  const segments = segmentsOf(path);
  const first = segments[0];
  if (first === undefined) return true;
  if (isTopLevelName(first)) return segments.length === 1;
  if (first === WEBDRIVE) return segments.length <= 2;
  if (first === GROUPS) return segments.length <= 3;
  return segments.length === 1;
}

/** The node permissions (docs/api.md), as myaccess reports them. */
export type Privilege = 'read' | 'write' | 'delete' | 'download';
export const ALL_PRIVILEGES: ReadonlySet<Privilege> = new Set(['read', 'write', 'delete', 'download']);
const READ_ONLY: ReadonlySet<Privilege> = new Set(['read']);
const NONE: ReadonlySet<Privilege> = new Set();

/**
 * What the bridge knows a user may do on a tree. `confirmed`: what the store said (myaccess, the
 * user's own tree, or the Group entry). `passed`: what the bridge lets through to the store for
 * the operations the store guards itself; equal to `confirmed` unless the store has no myaccess.
 */
interface Grants {
  confirmed: ReadonlySet<Privilege>;
  passed: ReadonlySet<Privilege>;
}
const OWN: Grants = { confirmed: ALL_PRIVILEGES, passed: ALL_PRIVILEGES };
const MADE_UP: Grants = { confirmed: READ_ONLY, passed: READ_ONLY };
/** myaccess answered 404 for this node: unknown to the user, so nothing. */
const NOTHING: Grants = { confirmed: NONE, passed: NONE };
/** A store without myaccess, where nothing else tells: the store decides what it guards, the bridge allows nothing of its own. */
const UNCONFIRMED: Grants = { confirmed: NONE, passed: ALL_PRIVILEGES };

export interface Quota {
  usedBytes: number;
  /** Infinity when the store reports no limit. */
  availableBytes: number;
}

export interface StoreTreeOptions {
  client: StoreClient;
  cache: MetadataCache;
  log?: Logger;
  /** How long a quota answer is reused. */
  quotaTtlMs?: number;
  /** How long a myaccess answer is reused (a permission change shows after it). */
  privilegesTtlMs?: number;
  /** bridge.hideMacSideFiles: a file's `._` twin follows its MOVE and DELETE (common/side-files.ts). */
  followsAppleDouble?: boolean;
}

/** A side file hidden from this request's client (BridgeUser.hidesMacSideFiles). */
function hiddenFrom(user: BridgeUser, entry: NodeEntry): boolean {
  return user.hidesMacSideFiles === true && entry.kind === 'file' && isMacSideFile(entry.name);
}

/** What the bridge asks of every dirlist: the whole folder, side files included (docs/extensions.md). */
const ALL_ENTRIES = { macSideFiles: true } as const;

function notFound(operation: string, what: string): StoreError {
  return new StoreError('not-found', operation, 404, `${what} not found`);
}

export class StoreTree {
  private readonly client: StoreClient;
  private readonly cache: MetadataCache;
  private readonly quotas: LRUCache<string, Quota | 'none'>;
  private readonly grants: LRUCache<string, Promise<Grants>>;
  /** Whether the store answers myaccess (hasMyAccess). */
  private readonly myAccessRoute = new ExtensionRoute(() =>
    this.log?.warn('the store has no myaccess: LOCK and PROPPATCH are allowed only where ownership or a Group entry confirms write (docs/bridge-design.md)'),
  );
  /** Whether the store answers reviseFrom (POST /api/nodes/{file}/revisions): hasRevisionRoute. */
  private readonly revisionRoute = new ExtensionRoute(() =>
    this.log?.info('the store has no revision route: a MOVE or COPY onto a file uploads the source as a new revision (docs/bridge-design.md "Saves")'),
  );
  private readonly log?: Logger;
  /** Tails of the works queued per key by oneAtATime (removals of a node, transfers onto a name). */
  private readonly queues = new KeyedQueue();
  private readonly followsAppleDouble: boolean;
  readonly namespace: Namespace;
  readonly versions: VersionsView;

  constructor(options: StoreTreeOptions) {
    this.client = options.client;
    this.cache = options.cache;
    this.log = options.log;
    this.followsAppleDouble = options.followsAppleDouble ?? false;
    this.quotas = new LRUCache({ max: 10_000, ttl: options.quotaTtlMs ?? 5_000 });
    this.grants = new LRUCache({ max: 10_000, ttl: Math.max(1, options.privilegesTtlMs ?? 2_000) });
    this.namespace = new Namespace({ client: this.client, cache: this.cache, withSession: (user, call) => this.withSession(user, call) });
    this.versions = new VersionsView({
      client: this.client,
      cache: this.cache,
      withSession: (user, call) => this.withSession(user, call),
      listing: (user, id) => this.listing(user, id),
      groups: async (user) => ((await this.namespace.root(user)).byName.has(GROUPS) ? this.namespace.groups(user) : undefined),
    });
  }

  /** Global key of a folder: bare top-level ids name a different folder per user. */
  folderKey(user: BridgeUser, id: NodeId): FolderKey {
    return (TOP_LEVEL as readonly string[]).includes(id) ? `${id}:${user.userId}` : id;
  }

  /**
   * Runs a store call with the user's session; after a 401 it logs in again once (the token
   * may have been revoked or the store restarted with another secret).
   */
  async withSession<T>(user: BridgeUser, call: (session: StoreSession) => Promise<T>): Promise<T> {
    const session = await user.session();
    try {
      return await call(session);
    } catch (err) {
      if (!(err instanceof StoreError) || err.kind !== 'unauthenticated') throw err;
      user.invalidate(session);
      return call(await user.session());
    }
  }

  private rootResource(user: BridgeUser): Resource {
    return {
      path: '/' as DavPath,
      kind: 'root',
      entry: folder('', ''),
      chain: [this.namespace.rootKey(user)],
    };
  }

  /** The listing of a folder: from the cache, or one dirlist shared by concurrent callers. */
  async listing(user: BridgeUser, folder: NodeId): Promise<Listing> {
    if (isVersionsId(folder)) return this.versions.list(user, folder);
    if (virtualOf(folder)) return this.namespace.list(user, folder);
    return this.cache.load(user.userId, this.folderKey(user, folder), async () =>
      // Everything, side files included: one cached listing serves Finder and the others (list and tryStat hide them per request).
      (await this.withSession(user, (s) => this.client.listFolder(s, folder, undefined, ALL_ENTRIES))).filter((e) => !e.name.startsWith(STAGING_PREFIX)),
    );
  }

  /** What a collection holds: the namespace's answer for the root and virtual collections, else the store's. */
  private childrenOf(user: BridgeUser, folder: Resource): Promise<Listing> {
    return folder.kind === 'root' ? this.namespace.root(user) : this.listing(user, folder.entry.id);
  }

  /**
   * The child of `parent` named `name` without listing `parent`, where its id follows from the
   * name alone: a top-level folder below the root, `/groups` below the root, a group's top-level
   * folder below `/groups/<name>`. Used when walking through (not stating) such a level, so a
   * request deep in `/home` costs no details calls for the top-level folders. Undefined when
   * the parent must be listed.
   */
  private childByName(user: BridgeUser, parent: Resource, name: string): NodeEntry | undefined {
    if (parent.kind === 'root') {
      if (isTopLevelName(name)) return folder(name, name);
      return undefined;
    }
    const virtual = virtualOf(parent.entry.id);
    if (virtual?.kind === 'group' && isTopLevelName(name)) return folder(`${name}:${virtual.groupId}`, name);
    return undefined;
  }

  /** Resolves a path; throws StoreError not-found when any segment is missing or not a folder. */
  async stat(user: BridgeUser, path: DavPath): Promise<Resource> {
    const found = await this.tryStat(user, path);
    if (!found) throw notFound('tree.stat', path);
    return found;
  }

  /** Like stat, but undefined when the path is unmapped (a parent missing included). */
  async tryStat(user: BridgeUser, path: DavPath): Promise<Resource | undefined> {
    await user.session();
    const segments = segmentsOf(path);
    let current = this.rootResource(user);
    if (segments.length === 0) {
      // The root is the bridge's own: it changes when a top-level folder does.
      const top = await this.namespace.root(user);
      const updatedMs = top.entries.reduce((latest, e) => Math.max(latest, e.updatedMs), 0);
      return { ...current, entry: { ...current.entry, updatedMs } };
    }
    for (const [index, segment] of segments.entries()) {
      if (current.entry.kind !== 'folder') return undefined;
      let entry: NodeEntry | undefined;
      if (current.kind === 'root' && segment === VERSIONS) {
        // Listed in the root only for Finder and Explorer (listsVersions), but there for everyone.
        entry = folder(versionsRootId(user.userId), VERSIONS);
      } else if (current.kind === 'root' && segment === WEBDRIVE) {
        // Never listed in the root (it would show every drive twice to a sync tool), but there.
        entry = folder(this.namespace.webdriveId(user), WEBDRIVE);
      } else if (current.kind === 'root' && segment === GROUPS && index < segments.length - 1) {
        entry = folder(this.namespace.groupsId(user), GROUPS);
      } else if (current.kind === 'root' && !isTopLevelName(segment) && segment !== GROUPS) {
        // The root holds only fixed names: Finder's probes (`/.DS_Store`, `/._.`,
        // `/Backups.backupdb`: docs/client-quirks.md §1) are answered without building the root listing.
        return undefined;
      } else {
        // Walking through, a level whose ids follow from names is not listed, unless its listing is cached anyway.
        const shortcut = index < segments.length - 1 ? this.childByName(user, current, segment) : undefined;
        const known = shortcut && !this.cache.listing(user.userId, current.chain[current.chain.length - 1] as string) ? shortcut : undefined;
        entry = known ?? (await this.childrenOf(user, current)).byName.get(segment);
      }
      if (!entry || hiddenFrom(user, entry)) return undefined;
      current = this.childResource(user, current, entry, toDavPath([...segmentsOf(current.path), entry.name]));
    }
    return current;
  }

  /** The resource for `entry`, listed in `parent`. */
  private childResource(user: BridgeUser, parent: Resource, entry: NodeEntry, path: DavPath): Resource {
    const chain = [...parent.chain, this.folderKey(user, entry.id)];
    if (virtualOf(entry.id) || isVersionsId(entry.id)) return { path, kind: 'virtual', entry, chain };
    if (parent.kind === 'root' || parent.kind === 'virtual') {
      const name = topLevelOfId(entry.id) ?? 'home';
      return { path, kind: 'top', entry, chain, top: { id: entry.id, name } };
    }
    const resource: Resource = { path, kind: 'node', entry, chain, parent: { id: parent.entry.id, key: this.folderKey(user, parent.entry.id) } };
    inheritFrom(parent, resource);
    return resource;
  }

  /** Children of a collection. */
  async list(user: BridgeUser, folder: Resource): Promise<Resource[]> {
    if (folder.entry.kind !== 'folder') return [];
    const listing = await this.childrenOf(user, folder);
    // A Depth 1 PROPFIND builds one of these per entry (10 000 in a big folder): plain loop,
    // the folder's path prefix computed once, only the new name normalised.
    const prefix = folder.path === '/' ? '/' : `${folder.path}/`;
    const entries = user.hidesMacSideFiles ? listing.entries.filter((e) => !hiddenFrom(user, e)) : listing.entries;
    const out = new Array<Resource>(entries.length);
    if (folder.kind === 'root' || folder.kind === 'virtual') {
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i] as NodeEntry;
        out[i] = this.childResource(user, folder, entry, (prefix + normalizeName(entry.name)) as DavPath);
      }
      if (folder.kind === 'root' && user.listsVersions === true) {
        const versions = folderEntry(versionsRootId(user.userId), VERSIONS, folder.entry.updatedMs);
        out.push(this.childResource(user, folder, versions, `/${VERSIONS}` as DavPath));
      }
      return out;
    }
    const parent = { id: folder.entry.id, key: this.folderKey(user, folder.entry.id) };
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as NodeEntry;
      const resource: Resource = { path: (prefix + normalizeName(entry.name)) as DavPath, kind: 'node', entry, chain: [...folder.chain, this.folderKey(user, entry.id)], parent };
      inheritFrom(folder, resource);
      out[i] = resource;
    }
    return out;
  }

  /**
   * What the user may do to `resource`: everything in their own tree (the store still decides,
   * this only saves a call); in another owner's tree (a group's), what myaccess on that tree's
   * top-level folder says; below `shared_with_you`, what myaccess on the shared node says (asked
   * once per TTL and shared by concurrent callers); only `read` on the root and the virtual
   * collections. Nothing is granted that the store did not confirm: a myaccess that answers 404
   * for this node grants nothing; a store without myaccess at all confirms only what follows from
   * ownership and from the caller's Group entry (grantsWithoutMyAccess). `passedToStore` asks
   * instead what the bridge lets through to the store for an operation the store itself guards
   * (PUT, MKCOL, DELETE, MOVE, COPY, GET): there a store without myaccess decides alone, and its
   * 403 reaches the client as one. LOCK and PROPPATCH, which only the bridge guards, and PROPFIND's
   * report ask what is confirmed.
   */
  async privileges(user: BridgeUser, resource: Resource, options: { exact?: boolean; passedToStore?: boolean } = {}): Promise<ReadonlySet<Privilege>> {
    const grants = await this.grantsOf(user, resource, options.exact ?? false);
    return options.passedToStore ? grants.passed : grants.confirmed;
  }

  private grantsOf(user: BridgeUser, resource: Resource, exact: boolean): Promise<Grants> {
    if (resource.kind === 'root' || resource.kind === 'virtual' || !resource.top) return Promise.resolve(MADE_UP);
    // A group's top-level folder decides for its tree. In a share, what holds for the shared node
    // may not hold below it (a writable share lets the recipient delete below it, never the shared
    // node itself): `exact` asks the resource's own node, else the shared node answers for all.
    const shared = resource.shareRoot === undefined ? undefined : exact ? resource.entry.id : resource.shareRoot;
    const asked = shared ?? (resource.top.id.includes(':') ? resource.top.id : undefined);
    if (asked === undefined) return Promise.resolve(OWN);
    return this.myAccessOf(user, asked, shared === undefined ? groupOfTop(resource.top.id) : undefined);
  }

  /** Every remembered myaccess answer is stale (shares or memberships changed elsewhere). */
  forgetPrivileges(): void {
    this.grants.clear();
  }

  /**
   * myaccess of one node, asked once per TTL and shared by concurrent callers. `groupId`: the
   * group whose tree the node is the top of (what a store without myaccess is asked instead).
   */
  private myAccessOf(user: BridgeUser, node: NodeId, groupId: string | undefined): Promise<Grants> {
    const key = `${user.userId}\0${node}`;
    const cached = this.grants.get(key);
    if (cached) return cached;
    const asked = this.askMyAccess(user, node, groupId).catch((err: unknown) => {
      this.grants.delete(key);
      throw err;
    });
    this.grants.set(key, asked);
    return asked;
  }

  private async askMyAccess(user: BridgeUser, node: NodeId, groupId: string | undefined): Promise<Grants> {
    if (this.myAccessRoute.isAbsent) return this.grantsWithoutMyAccess(user, groupId);
    let granted: string[];
    try {
      granted = await this.withSession(user, (s) => this.client.myAccess(s, node));
    } catch (err) {
      if (!(err instanceof StoreError && err.kind === 'not-found')) throw err;
      // Either the store has no such route, or this node is unknown to this user (deleted since
      // it was listed, a share ended): only the second grants nothing, and the two 404s look alike.
      if (await this.hasMyAccess(user, err)) return NOTHING;
      return this.grantsWithoutMyAccess(user, groupId);
    }
    this.myAccessRoute.markPresent();
    const confirmed = new Set(granted.filter((p): p is Privilege => ALL_PRIVILEGES.has(p as Privilege))) as ReadonlySet<Privilege>;
    return { confirmed, passed: confirmed };
  }

  /**
   * Whether the store answers myaccess at all, learned once per store (then kept for the life of
   * this bridge): driveway's store names a route it lacks (`not_implemented`, e.g. edition 1.0);
   * of another server, the caller's own home is asked, which exists for every user, so a 404
   * there means the route is missing. A failure of that question (store unreachable) decides
   * nothing and is thrown.
   */
  private hasMyAccess(user: BridgeUser, refusal: StoreError): Promise<boolean> {
    return this.myAccessRoute.learn(refusal, () =>
      this.withSession(user, (s) => this.client.myAccess(s, 'home' as NodeId)).then(
        () => true,
        (err: unknown) => {
          if (err instanceof StoreError && err.kind === 'not-found') return false;
          throw err;
        },
      ),
    );
  }

  /**
   * A store without myaccess: what the interface still shows. In a group's tree, the caller's
   * Group entry (`node_permissions` of GET /api/groups) confirms what it lists; not a member, or
   * no groups to ask, confirms nothing. Below `shared_with_you` nothing the interface shows says
   * what a share grants: nothing is confirmed. Operations the store guards itself pass to it.
   */
  private async grantsWithoutMyAccess(user: BridgeUser, groupId: string | undefined): Promise<Grants> {
    if (groupId === undefined) return UNCONFIRMED;
    let groups: GroupEntry[];
    try {
      groups = await this.withSession(user, (s) => this.client.listGroups(s));
    } catch (err) {
      if (err instanceof StoreError && (err.kind === 'not-found' || err.kind === 'forbidden' || err.kind === 'invalid')) return UNCONFIRMED;
      throw err;
    }
    const permissions = groups.find((g) => g.id === groupId)?.nodePermissions ?? [];
    const confirmed = new Set(permissions.filter((p): p is Privilege => ALL_PRIVILEGES.has(p as Privilege))) as ReadonlySet<Privilege>;
    return { confirmed, passed: ALL_PRIVILEGES };
  }

  /**
   * The quota that applies where `resource` lies: a group's for its tree (GET /api/groups/{uuid},
   * whose record the interface leaves open: read when it carries disk_quota and disk_used), the user's
   * otherwise (GET /api/user). Undefined when the server says neither (edition 1.0, a foreign
   * group record without them): the quota properties are then answered 404.
   */
  async quota(user: BridgeUser, resource?: Resource): Promise<Quota | undefined> {
    const groupId = groupOfTop(resource?.top?.id);
    const key = groupId === undefined ? `user\0${user.userId}` : `group\0${user.userId}\0${groupId}`;
    const cached = this.quotas.get(key);
    if (cached) return cached === 'none' ? undefined : cached;
    let usage: { quotaBytes: number; usedBytes: number } | undefined;
    try {
      if (groupId === undefined) {
        const profile = await this.withSession(user, (s) => this.client.currentUser(s));
        usage = { quotaBytes: profile.diskQuotaBytes, usedBytes: profile.diskUsedBytes };
      } else {
        usage = await this.withSession(user, (s) => this.client.groupUsage(s, groupId));
      }
    } catch (err) {
      if (!(err instanceof StoreError && (err.kind === 'not-found' || err.kind === 'forbidden'))) throw err;
    }
    if (!usage) {
      this.quotas.set(key, 'none');
      return undefined;
    }
    const quota: Quota = {
      usedBytes: usage.usedBytes,
      availableBytes: usage.quotaBytes > 0 ? Math.max(0, usage.quotaBytes - usage.usedBytes) : Number.POSITIVE_INFINITY,
    };
    this.quotas.set(key, quota);
    return quota;
  }

  /**
   * After a write into the trees of `tops` the usage shown there is outdated: the user's own, and
   * the group's the write went into (as this user sees it; other members see it after the quota TTL).
   */
  private afterWrite(user: BridgeUser, ...tops: Array<NodeId | undefined>): void {
    this.quotas.delete(`user\0${user.userId}`);
    for (const top of tops) {
      const groupId = groupOfTop(top);
      if (groupId !== undefined) this.quotas.delete(`group\0${user.userId}\0${groupId}`);
    }
  }

  /**
   * Reads a file, a byte range of it when asked. The range is handed to the store; a store that
   * ignores it (200) is read from the start and the bytes before the range are skipped here.
   */
  async read(user: BridgeUser, file: Resource, range?: ByteRange, signal?: AbortSignal): Promise<Download> {
    if (file.entry.kind !== 'file') throw new StoreError('invalid', 'tree.read', undefined, 'not a file');
    // A revision in /versions/ is its file's bytes at that revision.
    const revision = revisionOfId(file.entry.id);
    const id = revision?.file ?? file.entry.id;
    const download = await this.withSession(user, (s) => this.client.download(s, id, file.entry.name, { range, signal, ...(revision ? { version: revision.revision } : {}) }));
    if (!range || download.rangeHonoured) return download;
    const start = range.start;
    const end = range.end ?? Number.POSITIVE_INFINITY;
    // Only the sliced stream is right now: the download's own sendTo (if any) would send it all.
    const { sendTo: _whole, ...rest } = download;
    return { ...rest, status: 206, rangeHonoured: true, contentLength: undefined, body: sliceStream(download.body, start, end) };
  }

  /**
   * Writes a file at `path`: a new revision when a file is there, else a new file. Throws
   * conflict when the parent is missing or not a folder, or a folder has that name.
   */
  /** `checksum`: the client's OC-Checksum, refused (StoreError `invalid`) when the bytes contradict it, nothing written. */
  async write(user: BridgeUser, path: DavPath, body: Readable | Buffer, sizeBytes?: number, signal?: AbortSignal, checksum?: string): Promise<{ created: boolean; entry?: NodeEntry }> {
    const parent = await this.parentFolder(user, path, 'tree.write');
    const name = nameOf(path);
    const listing = await this.listing(user, parent.entry.id);
    const existing = listing.byName.get(name);
    if (existing?.kind === 'folder') throw new StoreError('conflict', 'tree.write', 409, 'a collection has that name');
    const target = existing ? { revisionOf: existing.id, name: existing.name } : { folder: parent.entry.id, name };
    const result = await this.withSession(user, (s) => this.client.upload(s, target, body, sizeBytes, signal, checksum === undefined ? undefined : { checksum }));
    this.afterWrite(user, parent.top?.id);
    if (existing) this.versions.forgetFile(existing.id);
    const key = this.folderKey(user, parent.entry.id);
    const id = result.id ?? existing?.id;
    if (id && result.sizeBytes !== undefined) {
      const entry: NodeEntry = {
        id,
        name: existing?.name ?? name,
        kind: 'file',
        sizeBytes: result.sizeBytes,
        updatedMs: Date.now(),
        ...(result.revision !== undefined ? { revision: result.revision } : {}),
        isStarred: existing?.isStarred ?? false,
        ...(result.checksums ? { checksums: result.checksums } : {}),
      };
      this.cache.upsert(key, entry);
      return { created: !existing, entry };
    }
    this.cache.forget(key);
    return { created: !existing };
  }

  private async parentFolder(user: BridgeUser, path: DavPath, operation: string): Promise<Resource> {
    if (path === '/') throw new StoreError('forbidden', operation, 403, 'the root cannot be written');
    if (isFixedPath(path)) throw new StoreError('forbidden', operation, 403, 'top-level folders are fixed');
    const parent = await this.tryStat(user, parentOf(path));
    if (!parent || parent.entry.kind !== 'folder') throw new StoreError('conflict', operation, 409, 'parent collection missing');
    if (parent.kind === 'root' || parent.kind === 'virtual') throw new StoreError('forbidden', operation, 403, 'top-level folders are fixed');
    return parent;
  }

  /** Creates a collection; conflict when the parent is missing, `exists` when the name is taken. */
  async mkdir(user: BridgeUser, path: DavPath): Promise<void> {
    const parent = await this.parentFolder(user, path, 'tree.mkdir');
    const name = nameOf(path);
    const listing = await this.listing(user, parent.entry.id);
    if (listing.byName.has(name)) throw new StoreError('conflict', 'tree.mkdir', 405, 'exists');
    try {
      await this.withSession(user, (s) => this.client.createFolder(s, parent.entry.id, name));
    } catch (err) {
      // Two MKCOLs of one name at once (rclone's parallel transfers each make their parent):
      // both found the name free, the store made it for the first. The second is told it
      // exists (405, which rclone takes as done), not a bare conflict (409: "parent missing").
      if (!(err instanceof StoreError) || err.kind !== 'conflict') throw err;
      this.cache.forget(this.folderKey(user, parent.entry.id));
      if ((await this.listing(user, parent.entry.id)).byName.has(name)) throw new StoreError('conflict', 'tree.mkdir', 405, 'exists');
      throw err;
    } finally {
      this.cache.forget(this.folderKey(user, parent.entry.id));
    }
  }

  /**
   * Deletes (into trash; for good inside trash or below a "delete for good" folder, as the store
   * decides, and says: `forGood`). `withTwin` (a client's DELETE): a file's AppleDouble `._` twin
   * goes the same way, after it (twinOf).
   */
  async remove(user: BridgeUser, resource: Resource, options: { withTwin?: boolean } = {}): Promise<Removal> {
    if (resource.kind !== 'node' || !resource.parent) throw new StoreError('forbidden', 'tree.remove', 403, 'top-level folders are fixed');
    const twin = options.withTwin ? await this.twinOf(user, resource) : undefined;
    const removal = await this.removeOne(user, resource);
    if (twin) {
      try {
        await this.removeOne(user, twin);
      } catch (err) {
        // The file is gone as asked; a twin left behind is only Finder's metadata.
        this.log?.warn({ err, id: twin.entry.id }, 'could not delete the AppleDouble twin of a deleted file');
      }
    }
    return removal;
  }

  /**
   * The AppleDouble twin (`._<name>`) of a file, as its folder's listing has it (cached: the
   * request stated the file through that listing); undefined for a folder, a side file, a file
   * without one, or when bridge.hideMacSideFiles is off (side files are ordinary files then).
   */
  private async twinOf(user: BridgeUser, resource: Resource): Promise<Resource | undefined> {
    if (!this.followsAppleDouble || resource.kind !== 'node' || !resource.parent || resource.entry.kind !== 'file') return undefined;
    const twinName = appleDoubleOf(resource.entry.name);
    if (twinName === undefined) return undefined;
    const entry = (await this.listing(user, resource.parent.id)).byName.get(twinName);
    if (!entry || entry.kind !== 'file') return undefined;
    const twin: Resource = {
      path: toDavPath([...segmentsOf(parentOf(resource.path)), twinName]),
      kind: 'node',
      entry,
      chain: [...resource.chain.slice(0, -1), this.folderKey(user, entry.id)],
      parent: resource.parent,
    };
    if (resource.top) twin.top = resource.top;
    if (resource.shareRoot) twin.shareRoot = resource.shareRoot;
    return twin;
  }

  private async removeOne(user: BridgeUser, resource: Resource): Promise<Removal> {
    if (resource.kind !== 'node' || !resource.parent) throw new StoreError('forbidden', 'tree.remove', 403, 'top-level folders are fixed');
    const id = resource.entry.id;
    // The store's DELETE of a node already in trash deletes it for good. A removal meant to
    // trash (anything not reached through /trash) that races another one of the same node (two
    // DELETEs, a DELETE and an overwrite, two overwrites of one destination: the second acts on
    // what it stated before the first ran) must find it gone (404), not erase it from the trash.
    const removal = await this.oneAtATime(`remove ${id}`, async () => {
      if (resource.top && resource.top.name !== 'trash') await this.assertOutsideTrash(user, id);
      return this.withSession(user, (s) => this.client.remove(s, id));
    });
    this.afterWrite(user, resource.top?.id);
    this.cache.forget(resource.parent.key);
    this.cache.forget(this.folderKey(user, siblingTopId(resource.top?.id ?? ('home' as NodeId), 'trash')));
    if (resource.entry.kind === 'folder') this.cache.forget(this.folderKey(user, resource.entry.id));
    return removal;
  }

  /** Takes the caller's star off a node (DELETE of an entry of `favorites`); the node stays. */
  async unstar(user: BridgeUser, resource: Resource, signal?: AbortSignal): Promise<void> {
    await this.withSession(user, (s) => this.client.setStarred(s, resource.entry.id, false, signal));
    if (resource.parent) this.cache.forget(resource.parent.key);
  }

  /**
   * Moves `source` to `to`: a rename, a move into another folder, or both (in an order that
   * avoids a passing name clash). An existing target (when `overwrite`) is replaced only once
   * the store has accepted the move: the source first goes into the target folder under a
   * hidden passing name, then the target goes to the trash, then the source takes its name.
   * When a step fails (refused, or the store unreachable), the steps made are undone (best
   * effort), the last one included: the target comes back out of the trash (putBack).
   */
  async move(user: BridgeUser, source: Resource, to: DavPath, overwrite: boolean): Promise<{ replaced: boolean }> {
    if (source.kind !== 'node' || !source.parent) throw new StoreError('forbidden', 'tree.move', 403, 'top-level folders are fixed');
    const targetParent = await this.parentFolder(user, to, 'tree.move');
    const twin = await this.twinOf(user, source);
    // One MOVE or COPY onto a destination at a time (in this process): each states what is in
    // the way once the one before it has finished, so two replacing the same name queue up
    // instead of both trashing the same old node and one leaving its node under a staging name.
    const moved = await this.oneAtATime(destinationKey(this.folderKey(user, targetParent.entry.id), to), () => this.moveInto(user, source, targetParent, to, overwrite));
    // The file's `._` twin (Finder's metadata of it) follows, replacing the destination's.
    const twinName = appleDoubleOf(nameOf(to));
    if (twin && twinName !== undefined) {
      try {
        await this.move(withMacSideFiles(user), twin, toDavPath([...segmentsOf(parentOf(to)), twinName]), true);
      } catch (err) {
        this.log?.warn({ err, id: twin.entry.id }, 'could not move the AppleDouble twin of a moved file');
      }
    }
    return moved;
  }

  private async moveInto(user: BridgeUser, source: Resource, targetParent: Resource, to: DavPath, overwrite: boolean): Promise<{ replaced: boolean }> {
    if (source.kind !== 'node' || !source.parent) throw new StoreError('forbidden', 'tree.move', 403, 'top-level folders are fixed');
    const existing = await this.targetInTheWay(user, to, overwrite, source, 'tree.move');
    if (existing && revisesInPlace(source, existing)) {
      await this.reviseInto(user, source, existing, true);
      return { replaced: true };
    }
    const newName = nameOf(to);
    const oldName = source.entry.name;
    const fromId = source.parent.id;
    const toId = targetParent.entry.id;
    const id = source.entry.id;
    const undo: Array<(s: StoreSession) => Promise<void>> = [];
    const rename = async (name: string, back: string): Promise<void> => {
      await this.withSession(user, (s) => this.client.rename(s, id, name));
      undo.push((s) => this.client.rename(s, id, back));
    };
    const moveTo = async (folder: NodeId, back: NodeId): Promise<void> => {
      await this.withSession(user, (s) => this.client.moveInto(s, id, folder));
      undo.push((s) => this.client.moveInto(s, id, back));
    };
    // The name the source has in the target folder before the swap: the final one when nothing
    // is in the way; else its own name when that is free there, else a hidden passing name.
    let placed = newName;
    if (existing) placed = toId !== fromId && !(await this.listing(user, toId)).byName.has(oldName) ? oldName : stagingName();
    // Set once the replaced target went to the trash: a failure after that puts it back.
    let removal: Removal | undefined;
    try {
      if (toId === fromId) {
        if (placed !== oldName) await rename(placed, oldName);
      } else if (placed === oldName) {
        await moveTo(toId, fromId);
      } else {
        const targetListing = await this.listing(user, toId);
        const sourceListing = await this.listing(user, fromId);
        if (!targetListing.byName.has(oldName)) {
          await moveTo(toId, fromId);
          await rename(placed, oldName);
        } else if (!sourceListing.byName.has(placed)) {
          await rename(placed, oldName);
          await moveTo(toId, fromId);
        } else {
          const passing = stagingName();
          await rename(passing, oldName);
          await moveTo(toId, fromId);
          await rename(placed, passing);
        }
      }
      if (existing) {
        removal = await this.removeReplaced(user, existing);
        if (placed !== newName) await this.withSession(user, (s) => this.client.rename(s, id, newName));
      }
    } catch (err) {
      await this.undoSteps(user, undo, id);
      if (existing && removal) await this.putBack(user, existing, removal);
      throw err;
    } finally {
      // A move between a user's and a group's tree moves usage between them.
      if (source.top?.id !== targetParent.top?.id) this.afterWrite(user, source.top?.id, targetParent.top?.id);
      this.cache.forget(source.parent.key);
      this.cache.forget(this.folderKey(user, toId));
    }
    return { replaced: existing !== undefined };
  }

  /** Runs the undo steps of a failed multi-step change, last first; stops at the first that fails. */
  private async undoSteps(user: BridgeUser, undo: Array<(s: StoreSession) => Promise<void>>, id: NodeId): Promise<void> {
    for (const step of undo.reverse()) {
      try {
        await this.withSession(user, step);
      } catch (undoErr) {
        this.log?.warn({ err: undoErr, id }, 'could not undo a step of a failed move or copy');
        break;
      }
    }
  }

  /**
   * Puts a replaced target back after the last step of its replacement failed (the new node could
   * not take its name: the store unreachable between two calls): `move_to` out of the trash
   * restores a node anywhere (docs/store-semantics.md "Nodes") and `new_name` gives back the name
   * the trash may have numbered; same UUID, so its revisions, dead properties and locks are
   * intact. Best effort: a target deleted for good (below a "delete for good" folder, or in the
   * trash already) or a store still unreachable leaves it where it is, logged with where.
   */
  private async putBack(user: BridgeUser, replaced: Resource, removal: Removal): Promise<void> {
    const id = replaced.entry.id;
    const parent = replaced.parent;
    if (!parent) return;
    if (removal.forGood === true) {
      this.log?.error({ id, name: replaced.entry.name }, 'a MOVE or COPY failed after the target it replaced was deleted for good');
      return;
    }
    try {
      await this.withSession(user, (s) => this.client.moveInto(s, id, parent.id));
      await this.withSession(user, (s) => this.client.rename(s, id, replaced.entry.name));
    } catch (err) {
      this.log?.error({ err, id, name: replaced.entry.name }, 'a MOVE or COPY failed after the target it replaced went to the trash; the target stays there');
    } finally {
      this.cache.forget(parent.key);
      this.cache.forget(this.folderKey(user, siblingTopId(replaced.top?.id ?? ('home' as NodeId), 'trash')));
    }
  }

  /**
   * Copies `source` to `to`. copy_to keeps the name and returns no id, so a copy under another
   * name, or onto an existing target, goes through a staging folder inside the target folder:
   * copy there, rename, move out, then delete the staging folder for good. An existing target
   * (when `overwrite`) goes to the trash only after the store has accepted the copy (the refusals
   * 403 download, 404, 507 quota come from copy_to), just before the copy moves out, and comes
   * back when the move out fails (putBack); the staging folder goes either way. With
   * `shallow` a collection is copied without its members (COPY Depth 0, RFC 4918 §9.8.3): an
   * empty collection is created at `to`.
   */
  async copy(user: BridgeUser, source: Resource, to: DavPath, overwrite: boolean, options: { shallow?: boolean } = {}): Promise<{ replaced: boolean }> {
    if (source.kind === 'root') throw new StoreError('forbidden', 'tree.copy', 403, 'the root cannot be copied');
    const targetParent = await this.parentFolder(user, to, 'tree.copy');
    // One at a time per destination, as for move().
    return this.oneAtATime(destinationKey(this.folderKey(user, targetParent.entry.id), to), () => this.copyInto(user, source, targetParent, to, overwrite, options));
  }

  private async copyInto(user: BridgeUser, source: Resource, targetParent: Resource, to: DavPath, overwrite: boolean, options: { shallow?: boolean }): Promise<{ replaced: boolean }> {
    const existing = await this.targetInTheWay(user, to, overwrite, source, 'tree.copy');
    if (existing && revisesInPlace(source, existing)) {
      await this.reviseInto(user, source, existing, false);
      return { replaced: true };
    }
    const shallow = options.shallow === true && source.entry.kind === 'folder';
    if (shallow && !existing) {
      await this.mkdir(user, to);
      return { replaced: false };
    }
    const newName = nameOf(to);
    const targetId = targetParent.entry.id;
    const targetKey = this.folderKey(user, targetId);
    const run = (call: (s: StoreSession) => Promise<void>) => this.withSession(user, call);
    try {
      const targetListing = await this.listing(user, targetId);
      if (!existing && newName === source.entry.name && !targetListing.byName.has(newName)) {
        await run((s) => this.client.copyInto(s, source.entry.id, targetId));
        return { replaced: false };
      }
      const staged = stagingName();
      await run((s) => this.client.createFolder(s, targetId, staged));
      const staging = (await this.withSession(user, (s) => this.client.listFolder(s, targetId, undefined, ALL_ENTRIES))).find((e) => e.name === staged);
      if (!staging) throw new StoreError('bad-response', 'tree.copy', undefined, 'staging folder not listed after creation');
      // Set once the replaced target went to the trash: a failure after that puts it back.
      let removal: Removal | undefined;
      try {
        if (shallow) await run((s) => this.client.createFolder(s, staging.id, newName));
        else await run((s) => this.client.copyInto(s, source.entry.id, staging.id));
        const copied = (await this.withSession(user, (s) => this.client.listFolder(s, staging.id, undefined, ALL_ENTRIES)))[0];
        if (!copied) throw new StoreError('bad-response', 'tree.copy', undefined, 'copy not listed in the staging folder');
        if (copied.name !== newName) await run((s) => this.client.rename(s, copied.id, newName));
        if (existing) removal = await this.removeReplaced(user, existing);
        await run((s) => this.client.moveInto(s, copied.id, targetId));
      } catch (err) {
        if (existing && removal) await this.putBack(user, existing, removal);
        throw err;
      } finally {
        await this.purge(user, staging.id, targetParent.top?.id);
      }
    } finally {
      this.afterWrite(user, targetParent.top?.id);
      this.cache.forget(targetKey);
    }
    return { replaced: existing !== undefined };
  }

  /**
   * The drive path of a file given by id, where the caller sees it: `/home/...`, `/incoming/...`,
   * or `/groups/<name>/home/...` for a group's; undefined for a node the caller reaches only
   * through a share or a derived view, or does not see (the store's path route answers 404).
   */
  async pathOfNode(user: BridgeUser, id: NodeId): Promise<DavPath | undefined> {
    let chain: Array<{ id: NodeId; name: string }>;
    try {
      chain = await this.withSession(user, (s) => this.client.path(s, id));
    } catch (err) {
      if (err instanceof StoreError && (err.kind === 'not-found' || err.kind === 'invalid')) return undefined;
      throw err;
    }
    const top = chain[0];
    const topName = top ? topLevelOfId(top.id) : undefined;
    if (!top || (topName !== 'home' && topName !== 'incoming')) return undefined;
    const groupId = groupOfTop(top.id);
    if (groupId === undefined) return toDavPath(chain.map((e) => e.name));
    const group = (await this.namespace.groups(user)).entries.find((e) => e.id === `group:${groupId}`);
    return group ? toDavPath([GROUPS, group.name, ...chain.map((e) => e.name)]) : undefined;
  }

  /**
   * Sets a folder's "delete for good" mark in the store (PROPPATCH of driveway's skip-trash
   * property). Answers the status the property gets (200; 403 refused; 409 over a store without
   * the extension or for something that cannot carry it) and the mark before, to put it back.
   */
  async setSkipTrash(user: BridgeUser, folder: Resource, on: boolean): Promise<{ status: number; previous?: boolean }> {
    try {
      const previous = (await this.withSession(user, (s) => this.client.details(s, folder.entry.id))).skipTrash === true;
      await this.withSession(user, (s) => this.client.setSkipTrash(s, folder.entry.id, on));
      return { status: 200, previous };
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
      if (err.kind === 'forbidden') return { status: 403 };
      if (err.kind === 'not-found' || err.kind === 'conflict' || err.kind === 'invalid' || err.httpStatus === 405 || err.httpStatus === 501) return { status: 409 };
      throw err;
    }
  }

  /**
   * Puts an entry of a trash folder back where it was deleted from (the store's restore:
   * docs/extensions.md "Trash and revisions from a client"): a MOVE to `/restore/<name>`. Only an
   * entry directly in a trash folder (403 otherwise); over a store that does not say where its
   * trash entries came from, 409 (a MOVE to a chosen folder still restores there).
   */
  async restoreFromTrash(user: BridgeUser, entry: Resource): Promise<{ path: DavPath }> {
    if (entry.kind !== 'node' || entry.top?.name !== 'trash' || entry.parent?.id !== entry.top.id || !entry.parent) {
      throw new StoreError('forbidden', 'tree.restore', 403, 'only an entry of a trash folder is restored');
    }
    if (!entry.entry.trashed) throw new StoreError('conflict', 'tree.restore', 409, 'the store does not say where this came from; MOVE it to a folder instead');
    try {
      const restored = await this.withSession(user, (s) => this.client.restoreFromTrash(s, entry.entry.id));
      this.cache.forget(this.folderKey(user, restored.parent));
      const prefix = segmentsOf(entry.path).slice(0, -2);
      return { path: toDavPath([...prefix, ...restored.parentPath, restored.name]) };
    } finally {
      this.afterWrite(user, entry.top.id);
      this.cache.forget(entry.parent.key);
    }
  }

  /**
   * COPY of a revision out of `/versions/` (`source`, a revision's resource) to `to`: onto its
   * own file it is the restore (the store's revision restore: the revision's bytes become the
   * next revision, no byte copied; 204, with Overwrite: T or F alike, as nothing is replaced);
   * to a free name it is a new file with the revision's
   * bytes (download and upload, 201). Onto any other resource it is refused (403): a revision is
   * restored onto the file it belongs to, never over another.
   */
  async copyRevision(user: BridgeUser, source: Resource, to: DavPath): Promise<{ replaced: boolean }> {
    const revision = revisionOfId(source.entry.id);
    if (!revision) throw new StoreError('invalid', 'tree.copyRevision', 400, 'not a revision');
    const existing = await this.tryStat(user, to);
    if (existing) {
      if (existing.entry.id !== revision.file) throw new StoreError('forbidden', 'tree.copyRevision', 403, 'a revision is restored onto its own file only');
      // Overwrite: F is not refused here: the file is not replaced but gains a revision, its
      // history intact, and rclone (1.60 and later) sends F on every COPY (docs/client-quirks.md §3).
      try {
        await this.withSession(user, (s) => this.client.restoreRevision(s, revision.file, revision.revision));
      } finally {
        this.afterWrite(user, existing.top?.id);
        if (existing.parent) this.cache.forget(existing.parent.key);
        this.versions.forgetFile(revision.file);
      }
      return { replaced: true };
    }
    const download = await this.withSession(user, (s) => this.client.download(s, revision.file, source.entry.name, { version: revision.revision }));
    try {
      await this.write(user, to, download.body, download.totalBytes ?? source.entry.sizeBytes);
    } finally {
      if (!download.body.destroyed) download.body.destroy();
    }
    return { replaced: false };
  }

  /**
   * MOVE or COPY of a file onto a file with Overwrite: T (a client's safe save: docs/bridge-design.md
   * "Saves"): the source's content becomes the next revision of `existing`, which keeps its UUID,
   * earlier revisions, shares, links, star and tags; `consume` (MOVE) takes the source away. Over a
   * store with the extension (docs/extensions.md "Revision from another file") that is ONE call,
   * no byte copied, refused whole or done whole. Over a store that only speaks the interface, the
   * bridge downloads the source and uploads its bytes as a new revision of `existing` (SPEC: an
   * upload into a file), then removes the source; a refusal of the upload (quota, permission)
   * changes nothing, and a failure of the removal after it leaves the source in place beside the
   * new revision (nothing can take a revision back through the interface).
   */
  private async reviseInto(user: BridgeUser, source: Resource, existing: Resource, consume: boolean): Promise<void> {
    try {
      if (!this.revisionRoute.isAbsent) {
        try {
          await this.withSession(user, (s) => this.client.reviseFrom(s, existing.entry.id, source.entry.id, { consume }));
          this.revisionRoute.markPresent();
          return;
        } catch (err) {
          if (!(err instanceof StoreError && mayLackRoute(err)) || (await this.hasRevisionRoute(user, err))) throw err;
        }
      }
      await this.reviseByUpload(user, source, existing, consume);
    } finally {
      this.afterWrite(user, existing.top?.id, source.top?.id);
      this.versions.forgetFile(existing.entry.id);
      if (existing.parent) this.cache.forget(existing.parent.key);
      if (consume && source.parent) {
        this.cache.forget(source.parent.key);
        this.cache.forget(this.folderKey(user, siblingTopId(source.top?.id ?? ('home' as NodeId), 'trash')));
      }
    }
  }

  /**
   * The second half of a save by rename-away (verbs/rename-away.ts): the content of `source`, a
   * file being MOVEd (`consume`) or COPied onto the free name `to`, becomes the next revision of
   * `original`, the document the same client renamed away from `to` a moment ago, which then
   * takes `to` back. A refusal of the revision (reviseInto: quota, permission, the source gone)
   * or `to` taken meanwhile (412) throws before anything changed. A failure of the rename after
   * the revision leaves `original` under its backup name with the new revision (logged): nothing
   * is lost, the backup's DELETE puts it in the trash whole.
   */
  async restoreRenamedAway(user: BridgeUser, source: Resource, original: Resource, to: DavPath, consume: boolean): Promise<void> {
    const targetParent = await this.parentFolder(user, to, 'tree.move');
    await this.oneAtATime(destinationKey(this.folderKey(user, targetParent.entry.id), to), async () => {
      if (await this.tryStat(user, to)) throw new StoreError('conflict', 'tree.move', 412, 'destination exists');
      await this.reviseInto(user, source, original, consume);
      try {
        await this.withSession(user, (s) => this.client.rename(s, original.entry.id, nameOf(to)));
      } catch (err) {
        this.log?.error({ err, id: original.entry.id, name: nameOf(to), placed: original.entry.name }, 'a save by rename-away made its revision but the document could not take its name back');
        throw err;
      } finally {
        if (original.parent) this.cache.forget(original.parent.key);
      }
    });
  }

  /**
   * Whether the store has the revision route, learned once per store and kept for the life of this
   * bridge, as hasMyAccess learns myaccess: driveway's store names a route it lacks
   * (`not_implemented`, edition 1.0); of another server, a revision of the caller's home from
   * itself is asked, which the route refuses with a 4xx other than 404 (a folder is no file) and
   * a server without it answers 404 (or 405, 501: mayLackRoute). A failure of that question
   * (store unreachable) is thrown.
   */
  private hasRevisionRoute(user: BridgeUser, refusal: StoreError): Promise<boolean> {
    return this.revisionRoute.learn(refusal, async () => {
      const home = 'home' as NodeId;
      try {
        await this.withSession(user, (s) => this.client.reviseFrom(s, home, home, { consume: false }));
        return true;
      } catch (err) {
        if (!(err instanceof StoreError)) throw err;
        if (err.kind === 'unavailable' || err.kind === 'bad-response' || err.kind === 'unauthenticated') throw err;
        return !mayLackRoute(err);
      }
    });
  }

  /** reviseInto over a store that only speaks the interface: the bytes through the bridge. */
  private async reviseByUpload(user: BridgeUser, source: Resource, existing: Resource, consume: boolean): Promise<void> {
    const download = await this.withSession(user, (s) => this.client.download(s, source.entry.id, source.entry.name));
    try {
      await this.withSession(user, (s) => this.client.upload(s, { revisionOf: existing.entry.id, name: existing.entry.name }, download.body, download.totalBytes ?? source.entry.sizeBytes));
    } finally {
      if (!download.body.destroyed) download.body.destroy();
    }
    if (!consume) return;
    // As the store's route does: the source (a temp file) goes for good, its content living on
    // as the new revision. The interface deletes in two steps: into the trash, then out of it.
    // Below a "delete for good" folder the first step is the last.
    if ((await this.withSession(user, (s) => this.client.remove(s, source.entry.id))).forGood === true) return;
    try {
      await this.withSession(user, (s) => this.client.remove(s, source.entry.id));
    } catch (err) {
      this.log?.warn({ err, id: source.entry.id }, 'the source of a save is in the trash, not deleted for good');
    }
  }

  /** Deletes a node for good: into trash, then from trash (the store's two-step delete). */
  private async purge(user: BridgeUser, id: NodeId, topId: NodeId = 'home' as NodeId): Promise<void> {
    try {
      // Below a "delete for good" folder the first step is the last.
      if ((await this.withSession(user, (s) => this.client.remove(s, id))).forGood !== true) await this.withSession(user, (s) => this.client.remove(s, id));
    } catch (err) {
      this.log?.warn({ err, id }, 'could not remove a staging folder');
    }
    this.cache.forget(this.folderKey(user, siblingTopId(topId, 'trash')));
  }

  /**
   * For MOVE/COPY: what is at `to` and will be replaced (nothing is removed here: the caller
   * replaces it once the store accepted the new content). 412 when something is there and
   * `overwrite` is false.
   */
  /** Trashes the destination a MOVE or COPY replaces; one deleted meanwhile (by a DELETE) is a conflict, and nothing changes. */
  private async removeReplaced(user: BridgeUser, existing: Resource): Promise<Removal> {
    try {
      return await this.remove(user, existing);
    } catch (err) {
      if (err instanceof StoreError && err.kind === 'not-found') throw new StoreError('conflict', 'tree.replace', 409, 'the destination was deleted while the request ran', { cause: err });
      throw err;
    }
  }

  /** 404 when `id` lies in trash now (a concurrent removal got there first): nothing is removed then. */
  private async assertOutsideTrash(user: BridgeUser, id: NodeId): Promise<void> {
    const path = await this.withSession(user, (s) => this.client.path(s, id));
    const top = path[0];
    if (top && (topLevelOfId(top.id) === 'trash' || top.name === 'trash')) {
      throw new StoreError('not-found', 'tree.remove', 404, 'the node was deleted meanwhile');
    }
  }

  /** Runs `work` after every earlier work of the same key (in this process) has settled. */
  private oneAtATime<T>(key: string, work: () => Promise<T>): Promise<T> {
    return this.queues.run(key, work);
  }

  private async targetInTheWay(user: BridgeUser, to: DavPath, overwrite: boolean, source: Resource, operation: string): Promise<Resource | undefined> {
    const existing = await this.tryStat(user, to);
    if (!existing) return undefined;
    if (existing.entry.id === source.entry.id) throw new StoreError('forbidden', operation, 403, 'source and destination are the same resource');
    if (!overwrite) throw new StoreError('conflict', operation, 412, 'destination exists');
    if (existing.kind !== 'node' || !existing.parent) throw new StoreError('forbidden', operation, 403, 'top-level folders are fixed');
    return existing;
  }
}

/**
 * A MOVE or COPY of `source` onto `existing` that makes a new revision of `existing` instead of
 * replacing it: a file onto a file. Anything involving a collection replaces, as before.
 */
export function revisesInPlace(source: Resource, existing: Resource): boolean {
  return source.entry.kind === 'file' && existing.entry.kind === 'file' && existing.kind === 'node';
}

/** An answer a server gives for a route it does not have: 404, or 405 / 501 from some. */
function mayLackRoute(err: StoreError): boolean {
  return err.kind === 'not-found' || err.httpStatus === 405 || err.httpStatus === 501;
}

/** What serialises MOVE and COPY onto one name of one folder. */
function destinationKey(folder: FolderKey, to: DavPath): string {
  return `to ${folder}/${nameOf(to)}`;
}

/** A hidden name for a node on its way (listings leave it out). */
function stagingName(): string {
  return `${STAGING_PREFIX}${randomBytes(6).toString('hex')}`;
}

/** Skips `start` bytes and ends after byte `end` (inclusive) of a stream that starts at 0. */
function sliceStream(source: Readable, start: number, end: number): Readable {
  let position = 0;
  // Set once the range is complete: the source is then destroyed on purpose, and the error an
  // undici body reports for that must not fail the slice.
  let complete = false;
  const slicer = new Transform({
    transform(chunk: Buffer, _enc, callback) {
      const chunkStart = position;
      position += chunk.length;
      if (position <= start || chunkStart > end) {
        if (chunkStart > end) {
          complete = true;
          source.destroy();
        }
        callback();
        return;
      }
      callback(null, chunk.subarray(Math.max(0, start - chunkStart), Math.min(chunk.length, end - chunkStart + 1)));
      if (position > end) {
        complete = true;
        source.unpipe(slicer);
        source.destroy();
        slicer.end();
      }
    },
  });
  source.on('error', (err) => {
    if (!complete) slicer.destroy(err);
  });
  return source.pipe(slicer);
}
