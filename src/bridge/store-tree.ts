/**
 * The async core of the bridge: DAV paths -> store operations, through the metadata cache. It
 * speaks DAV words (path, resource, collection) upward and the store API's words (node, dirlist:
 * docs/api.md) only through src/store-client, so it serves any server of the interface. It never
 * touches HTTP requests or responses. A refusal the bridge decides is a DavStatusError; a
 * failure of the store is its StoreError (dav-errors.ts maps both).
 *
 * StoreTree is the front of the rooms in tree/, each with one job:
 * - resolver.ts and the kinds of collection (root, webdrive, groups, versions, store-folder):
 *   path lookup, each collection asked for its child; listings cached per user and folder;
 * - grants.ts: privileges (myaccess) and quota, each remembered briefly;
 * - files.ts: read, write (a new file or revision), mkdir;
 * - trash.ts: DELETE, the restore from the trash, the "delete for good" mark, unstar;
 * - revisions.ts: saves onto a file (a new revision), a revision copied out of /versions/;
 * - transfers.ts: MOVE and COPY with their undo steps.
 * A caller that already resolved a resource may call a room directly and skip the lookup the
 * path-taking methods here make.
 */
import type { Readable } from 'node:stream';
import { KeyedQueue } from '../common/keyed-queue.js';
import type { Logger } from '../common/logger.js';
import type { ByteRange, Download, NodeEntry, NodeId, Removal, SearchQuery, SearchResult, StoreClient, StoreSession } from '../store-client/contract.js';
import type { FolderKey, Listing, MetadataCache } from './metadata-cache.js';
import type { BridgeUser } from './sessions.js';
import { withSession, type TreeContext } from './tree/context.js';
import { Files, type WriteOutcome } from './tree/files.js';
import { Grants, type Privilege, type Quota } from './tree/grants.js';
import { folderKeyOf, type DavPath } from './tree/paths.js';
import { Resolver } from './tree/resolver.js';
import type { Resource } from './tree/resource.js';
import { Revisions } from './tree/revisions.js';
import { Transfers } from './tree/transfers.js';
import { Trash } from './tree/trash.js';

export { TOP_LEVEL } from './namespace.js';
export { ALL_PRIVILEGES, type Privilege, type Quota } from './tree/grants.js';
export { isFixedPath, nameOf, parentOf, segmentsOf, toDavPath, type DavPath } from './tree/paths.js';
export { budgetOwnerOf, isDerivedView, isDerivedViewEntry, type Resource, type ResourceKind } from './tree/resource.js';
export { STAGING_PREFIX } from './tree/store-folder.js';
export { revisesInPlace } from './tree/transfers.js';

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

export class StoreTree {
  readonly resolver: Resolver;
  readonly grants: Grants;
  readonly files: Files;
  readonly trash: Trash;
  readonly revisions: Revisions;
  readonly transfers: Transfers;
  private readonly client: StoreClient;

  constructor(options: StoreTreeOptions) {
    this.client = options.client;
    const ctx: TreeContext = { client: options.client, cache: options.cache, log: options.log };
    this.client = options.client;
    /** Works queued per key (in this process): removals of a node, transfers onto a name. */
    const queues = new KeyedQueue();
    this.resolver = new Resolver(ctx);
    this.grants = new Grants(ctx, { quotaTtlMs: options.quotaTtlMs, privilegesTtlMs: options.privilegesTtlMs });
    this.files = new Files(ctx, this.resolver, this.grants);
    this.trash = new Trash(ctx, this.resolver, this.grants, { followsAppleDouble: options.followsAppleDouble ?? false, queues });
    this.revisions = new Revisions(ctx, this.resolver, this.grants, this.files);
    this.transfers = new Transfers(ctx, { resolver: this.resolver, grants: this.grants, files: this.files, trash: this.trash, revisions: this.revisions, queues });
  }

  /** Global key of a folder: bare top-level ids name a different folder per user. */
  folderKey(user: BridgeUser, id: NodeId): FolderKey {
    return folderKeyOf(user, id);
  }

  /**
   * Runs a store call with the user's session; after a 401 it logs in again once (the token
   * may have been revoked or the store restarted with another secret).
   */
  withSession<T>(user: BridgeUser, call: (session: StoreSession) => Promise<T>): Promise<T> {
    return withSession(user, call);
  }

  /** The listing of a collection: from the cache, or one listing shared by concurrent callers. */
  listing(user: BridgeUser, folder: NodeId): Promise<Listing> {
    return this.resolver.listing(user, folder);
  }

  /** Resolves a path; 404 (DavStatusError) when any segment is missing or not a collection. */
  stat(user: BridgeUser, path: DavPath): Promise<Resource> {
    return this.resolver.stat(user, path);
  }

  /** Like stat, but undefined when the path is unmapped (a parent missing included). */
  tryStat(user: BridgeUser, path: DavPath, fresh = false): Promise<Resource | undefined> {
    return this.resolver.tryStat(user, path, fresh);
  }

  /**
   * Runs `work` (writes through this tree) as one group commit when the store can (StoreClient
   * groupCommit: one fsync for all of them before this resolves), else as it is: each write
   * durable on its own.
   */
  groupCommit<T>(work: () => Promise<T>): Promise<T> {
    const { client } = this;
    return client.groupCommit ? client.groupCommit(work) : work();
  }

  /** Children of a collection. */
  list(user: BridgeUser, folder: Resource): Promise<Resource[]> {
    return this.resolver.list(user, folder);
  }

  /** What the user may do to `resource` (Grants.privileges). */
  privileges(user: BridgeUser, resource: Resource, options: { exact?: boolean; passedToStore?: boolean } = {}): Promise<ReadonlySet<Privilege>> {
    return this.grants.privileges(user, resource, options);
  }

  /** Whether the user may share `resource` on (Grants.mayShare). */
  mayShare(user: BridgeUser, resource: Resource): Promise<boolean> {
    return this.grants.mayShare(user, resource);
  }

  /** Every remembered myaccess answer is stale (shares or memberships changed elsewhere). */
  forgetPrivileges(): void {
    this.grants.forget();
  }

  /** The quota that applies where `resource` lies (Grants.quota). */
  quota(user: BridgeUser, resource?: Resource): Promise<Quota | undefined> {
    return this.grants.quota(user, resource);
  }

  /** Reads a file, a byte range of it when asked (Files.read). */
  read(user: BridgeUser, file: Resource, range?: ByteRange, signal?: AbortSignal): Promise<Download> {
    return this.files.read(user, file, range, signal);
  }

  /**
   * Writes a file at `path`: a new revision when a file is there, else a new file. 409 when the
   * parent is missing or not a folder, or a folder has that name; 403 on a fixed path.
   * `checksum`: the client's OC-Checksum, refused (StoreError `invalid`) when the bytes contradict it, nothing written.
   */
  write(user: BridgeUser, path: DavPath, body: Readable | Buffer, sizeBytes?: number, signal?: AbortSignal, checksum?: string): Promise<WriteOutcome> {
    return this.files.writeAt(user, path, body, sizeBytes, signal, checksum);
  }

  /** Creates a collection; 409 when the parent is missing, 405 when the name is taken. */
  mkdir(user: BridgeUser, path: DavPath): Promise<void> {
    return this.files.mkdirAt(user, path);
  }

  /** Deletes, with the AppleDouble twin when `withTwin` (Trash.remove). */
  remove(user: BridgeUser, resource: Resource, options: { withTwin?: boolean } = {}): Promise<Removal> {
    return this.trash.remove(user, resource, options);
  }

  /** Takes the caller's star off a node (DELETE of an entry of `favorites`); the node stays. */
  unstar(user: BridgeUser, resource: Resource, signal?: AbortSignal): Promise<void> {
    return this.trash.setStarred(user, resource, false, signal);
  }

  /** Sets or takes off the caller's star on a node (Trash.setStarred). */
  setStarred(user: BridgeUser, resource: Resource, on: boolean): Promise<void> {
    return this.trash.setStarred(user, resource, on);
  }

  /** Moves `source` to `to`, replacing what is there when `overwrite` (Transfers.move). */
  move(user: BridgeUser, source: Resource, to: DavPath, overwrite: boolean): Promise<{ replaced: boolean }> {
    return this.transfers.move(user, source, to, overwrite);
  }

  /** Copies `source` to `to`, replacing what is there when `overwrite` (Transfers.copy). */
  copy(user: BridgeUser, source: Resource, to: DavPath, overwrite: boolean, options: { shallow?: boolean } = {}): Promise<{ replaced: boolean }> {
    return this.transfers.copy(user, source, to, overwrite, options);
  }

  /** Resources of search hits, where the caller sees them (Resolver.resourcesOfHits). */
  resourcesOfHits(user: BridgeUser, hits: ReadonlyArray<{ entry: NodeEntry; chain: ReadonlyArray<{ id: NodeId; name: string }> }>): Promise<Array<Resource | undefined>> {
    return this.resolver.resourcesOfHits(user, hits);
  }

  /** A page of the caller's nodes matching `query` (the store's search extension). */
  search(user: BridgeUser, query: SearchQuery, signal?: AbortSignal): Promise<SearchResult> {
    return withSession(user, (s) => this.client.search(s, query, signal));
  }

  /** The drive path of a node given by id, where the caller sees it (Resolver.pathOfNode). */
  pathOfNode(user: BridgeUser, id: NodeId): Promise<DavPath | undefined> {
    return this.resolver.pathOfNode(user, id);
  }

  /** Sets a folder's "delete for good" mark (Trash.setSkipTrash). */
  setSkipTrash(user: BridgeUser, folder: Resource, on: boolean): Promise<{ status: number; previous?: boolean }> {
    return this.trash.setSkipTrash(user, folder, on);
  }

  /** Puts an entry of a trash folder back where it was deleted from (Trash.restoreFromTrash). */
  restoreFromTrash(user: BridgeUser, entry: Resource): Promise<{ path: DavPath }> {
    return this.trash.restoreFromTrash(user, entry);
  }

  /** COPY of a revision out of `/versions/` (Revisions.copyRevision). */
  copyRevision(user: BridgeUser, source: Resource, to: DavPath): Promise<{ replaced: boolean }> {
    return this.revisions.copyRevision(user, source, to);
  }

  /** The second half of a save by rename-away (Transfers.restoreRenamedAway). */
  restoreRenamedAway(user: BridgeUser, source: Resource, original: Resource, to: DavPath, consume: boolean): Promise<void> {
    return this.transfers.restoreRenamedAway(user, source, original, to, consume);
  }
}
