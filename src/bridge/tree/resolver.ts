/**
 * Path lookup: a DAV path walked segment by segment, each collection asked for its child by its
 * kind (collection.ts), and a collection's members. The store API has no path lookup, so store
 * folders are listed folder by folder, each at most once per TTL per user, concurrent lookups
 * sharing one call; the made-up levels above them cost no call where a child's id follows from
 * its name. Refusals are DAV errors (404, and what parentFolder refuses); nothing is written here.
 */
import { StoreError, type NodeEntry, type NodeId } from '../../store-client/contract.js';
import { DavStatusError } from '../dav-errors.js';
import type { Listing } from '../metadata-cache.js';
import { GROUP_PREFIX, GROUPS, GROUPS_PREFIX, groupCollectionId, groupOfTop, topLevelOfId, WEBDRIVE_PREFIX } from '../namespace.js';
import type { BridgeUser } from '../sessions.js';
import { REVISION_PREFIX } from '../versions-view.js';
import { clientViewOf, inClientView } from './client-view.js';
import type { Collection } from './collection.js';
import { withSession, type TreeContext } from './context.js';
import { Group, Groups } from './groups.js';
import { folderKeyOf, isFixedPath, parentOf, segmentsOf, toDavPath, type DavPath } from './paths.js';
import { fixedPathRefused, hiddenFrom, type Resource } from './resource.js';
import { Root } from './root.js';
import { StoreFolder } from './store-folder.js';
import { versionsKinds } from './versions.js';
import { Webdrive } from './webdrive.js';

/** The prefix (through the first `:`) by which a made-up id names its kind; '' for none. */
function prefixOf(id: string): string {
  return id.slice(0, id.indexOf(':') + 1);
}

export class Resolver {
  readonly root: Root;
  private readonly store: StoreFolder;
  private readonly groups: Groups;
  /** The made-up kinds by the id prefix each owns; any other id is a store folder's. */
  private readonly kinds: ReadonlyMap<string, Collection>;

  constructor(private readonly ctx: TreeContext) {
    this.store = new StoreFolder(ctx);
    this.groups = new Groups(ctx);
    this.root = new Root(ctx, (id) => this.isMadeUp(id), (user) => this.groups.children(user));
    this.kinds = new Map<string, Collection>([
      [WEBDRIVE_PREFIX, new Webdrive(ctx)],
      [GROUPS_PREFIX, this.groups],
      [GROUP_PREFIX, new Group(ctx)],
      ...versionsKinds(ctx, {
        listing: (user, folder) => this.store.children(user, folder),
        groups: async (user) => ((await this.root.children(user)).byName.has(GROUPS) ? this.groups.children(user) : undefined),
      }),
    ]);
  }

  /** Whether an id is one the bridge makes up (a collection of a made-up kind, or a revision). */
  isMadeUp(id: string): boolean {
    const prefix = prefixOf(id);
    return this.kinds.has(prefix) || prefix === REVISION_PREFIX;
  }

  private kindOfId(id: string): Collection {
    return this.kinds.get(prefixOf(id)) ?? this.store;
  }

  private kindOf(resource: Resource): Collection {
    return resource.kind === 'root' ? this.root : this.kindOfId(resource.entry.id);
  }

  /** The listing of a collection by id: from the cache, or one listing shared by concurrent callers. */
  listing(user: BridgeUser, folder: NodeId): Promise<Listing> {
    return this.kindOfId(folder).children(user, folder);
  }

  /** Resolves a path; 404 when any segment is missing or not a collection. */
  async stat(user: BridgeUser, path: DavPath): Promise<Resource> {
    const found = await this.tryStat(user, path);
    if (!found) throw new DavStatusError(404, `${path} not found`);
    return found;
  }

  /**
   * Like stat, but undefined when the path is unmapped (a parent missing included). `fresh`: the
   * resource's tree version and size as they are now (PROPFIND); otherwise they may be outdated
   * by a change below it (a walk to write: ids and names are what counts).
   */
  async tryStat(user: BridgeUser, path: DavPath, fresh = false): Promise<Resource | undefined> {
    await user.session();
    const segments = segmentsOf(path);
    if (segments.length === 0) return this.root.resource(user, !fresh);
    let current = this.root.base(user);
    for (const [index, segment] of segments.entries()) {
      if (current.entry.kind !== 'folder') return undefined;
      const kind = this.kindOf(current);
      const through = index < segments.length - 1;
      let entry: NodeEntry | undefined;
      try {
        entry = await kind.child(user, current.entry.id, segment, through, true);
      } catch (err) {
        // A group's top-level folder is walked through by its name alone (Group.child); one whose
        // listing the store refuses is one the group's collection does not show (top-folders.ts:
        // a membership without read), so it is unmapped here as there: 404 for any name below it,
        // there or not, whatever the cache holds.
        if (err instanceof StoreError && err.kind === 'forbidden' && current.kind === 'top' && groupOfTop(current.entry.id) !== undefined) return undefined;
        throw err;
      }
      // A folder on the way that the cached listing lacks may have been made since through another
      // door (the store's REST API, a foreign store's own app, within the TTL): the store is asked
      // once more before the path is unmapped (a write into it refused with 409). A missing last
      // segment (a new file's PUT, a probe) is common and is taken from the cache as it is.
      if (!entry && through && kind === this.store) entry = (await this.store.relisted(user, current.entry.id)).byName.get(segment);
      // Only a folder's entry carries a tree version: a file is as listed.
      if (entry?.kind === 'folder' && !through && fresh) entry = await kind.child(user, current.entry.id, segment, through, false);
      if (!entry || hiddenFrom(user, entry) || !inClientView(user, current, entry.name)) return undefined;
      current = kind.members(user, current, [entry])[0] as Resource;
    }
    return current;
  }

  /** The members of a collection (none of a file). */
  async list(user: BridgeUser, folder: Resource): Promise<Resource[]> {
    if (folder.entry.kind !== 'folder') return [];
    const kind = this.kindOf(folder);
    const listing = await kind.children(user, folder.entry.id);
    const shown = clientViewOf(user, folder, listing.entries);
    const entries = user.hidesMacSideFiles ? shown.filter((e) => !hiddenFrom(user, e)) : shown;
    return kind.members(user, folder, folder.kind === 'root' ? [...entries, ...this.root.alsoListed(user, folder)] : entries);
  }

  /**
   * The store folder a new resource at `path` goes into: 403 for the root, a fixed path or a
   * made-up collection; 409 when the parent is missing or not a collection.
   */
  async parentFolder(user: BridgeUser, path: DavPath): Promise<Resource> {
    if (path === '/') throw new DavStatusError(403, 'the root cannot be written');
    if (isFixedPath(path)) throw fixedPathRefused();
    const parent = await this.tryStat(user, parentOf(path));
    if (!parent || parent.entry.kind !== 'folder') throw new DavStatusError(409, 'parent collection missing');
    if (parent.kind === 'root' || parent.kind === 'virtual') throw fixedPathRefused();
    return parent;
  }

  /**
   * The drive path of a file given by id, where the caller sees it: `/home/...`, `/incoming/...`,
   * or `/groups/<name>/home/...` for a group's; undefined for a node the caller reaches only
   * through a share or a derived view, or does not see (the store's path route answers 404).
   */
  async pathOfNode(user: BridgeUser, id: NodeId): Promise<DavPath | undefined> {
    let chain: Array<{ id: NodeId; name: string }>;
    try {
      chain = await withSession(user, (s) => this.ctx.client.path(s, id));
    } catch (err) {
      if (err instanceof StoreError && (err.kind === 'not-found' || err.kind === 'invalid')) return undefined;
      throw err;
    }
    return this.pathOfChain(user, chain);
  }

  /** The drive path of a node given by its chain from its top-level folder (pathOfNode); undefined outside `home` and `incoming`. */
  async pathOfChain(user: BridgeUser, chain: ReadonlyArray<{ id: NodeId; name: string }>): Promise<DavPath | undefined> {
    const top = chain[0];
    const topName = top ? topLevelOfId(top.id) : undefined;
    if (!top || (topName !== 'home' && topName !== 'incoming')) return undefined;
    const groupId = groupOfTop(top.id);
    if (groupId === undefined) return toDavPath(chain.map((e) => e.name));
    const group = (await this.groups.children(user)).entries.find((e) => e.id === groupCollectionId(groupId));
    return group ? toDavPath([GROUPS, group.name, ...chain.map((e) => e.name)]) : undefined;
  }

  /**
   * The resources of search hits (each with its chain from its top-level folder, itself last),
   * built without listing a folder: the top-level folder is resolved (made-up levels, no store
   * call once known), the levels below follow from the chain. Undefined for a hit the caller's
   * view does not show (outside `home` and `incoming`, a side file hidden from this client).
   */
  async resourcesOfHits(user: BridgeUser, hits: ReadonlyArray<{ entry: NodeEntry; chain: ReadonlyArray<{ id: NodeId; name: string }> }>): Promise<Array<Resource | undefined>> {
    const tops = new Map<string, Promise<Resource | undefined>>();
    return Promise.all(
      hits.map(async ({ entry, chain }) => {
        const path = await this.pathOfChain(user, chain);
        const top = chain[0];
        if (path === undefined || top === undefined || chain.length < 2 || hiddenFrom(user, entry)) return undefined;
        const topPath = toDavPath(segmentsOf(path).slice(0, segmentsOf(path).length - (chain.length - 1)));
        let topResource = tops.get(topPath);
        if (!topResource) tops.set(topPath, (topResource = this.tryStat(user, topPath)));
        const resolved = await topResource;
        if (!resolved) return undefined;
        const keys = chain.slice(1).map((e) => folderKeyOf(user, e.id));
        const parent = chain[chain.length - 2] as { id: NodeId };
        const resource: Resource = {
          path,
          kind: 'node',
          entry,
          chain: [...resolved.chain, ...keys],
          parent: { id: parent.id, key: folderKeyOf(user, parent.id) },
        };
        if (resolved.top) resource.top = resolved.top;
        return resource;
      }),
    );
  }
}
