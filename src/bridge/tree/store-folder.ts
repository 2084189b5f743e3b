/**
 * A folder the store lists: a top-level folder (`home`, `incoming`, the trash, the derived views
 * `favorites`, `public_shares`, `private_shares`, `shared_with_you`, a group's) or any folder
 * below one. The listing is the store's dirlist, cached per user and folder (one call shared by
 * concurrent callers), side files included (one listing serves Finder and the others; the
 * resolver hides them per request) and the bridge's own staging names left out. Members are
 * nodes: they inherit the top-level folder they lie in, and below `shared_with_you` the shared
 * node whose myaccess decides (an entry there is that node itself).
 */
import type { NodeEntry, NodeId } from '../../store-client/contract.js';
import type { Listing } from '../metadata-cache.js';
import type { BridgeUser } from '../sessions.js';
import { listedChild, type Collection } from './collection.js';
import { withSession, type TreeContext } from './context.js';
import { childPath, folderKeyOf } from './paths.js';
import type { Resource } from './resource.js';

/** Names the bridge uses for its own bookkeeping inside store folders; never listed. */
export const STAGING_PREFIX = '.driveway-staging-';

/** What the bridge asks of every dirlist: the whole folder, side files included (docs/extensions.md). */
export const ALL_ENTRIES = { macSideFiles: true } as const;

export class StoreFolder implements Collection {
  constructor(private readonly ctx: TreeContext) {}

  children(user: BridgeUser, id: NodeId, anyTree = false): Promise<Listing> {
    return this.ctx.cache.load(user.userId, folderKeyOf(user, id), this.fetchOf(user, id), anyTree);
  }

  /** The listing fetched anew, whatever the cache holds (Resolver.tryStat: a folder on the way the cached listing lacks). */
  relisted(user: BridgeUser, id: NodeId): Promise<Listing> {
    return this.ctx.cache.reload(user.userId, folderKeyOf(user, id), this.fetchOf(user, id));
  }

  private fetchOf(user: BridgeUser, id: NodeId): () => Promise<NodeEntry[]> {
    const { client } = this.ctx;
    return async () => (await withSession(user, (s) => client.listFolder(s, id, undefined, ALL_ENTRIES))).filter((e) => !e.name.startsWith(STAGING_PREFIX));
  }

  child(user: BridgeUser, id: NodeId, name: string, _through: boolean, anyTree?: boolean): Promise<NodeEntry | undefined> {
    return listedChild(this, user, id, name, anyTree);
  }

  members(user: BridgeUser, parent: Resource, entries: readonly NodeEntry[]): Resource[] {
    const holder = { id: parent.entry.id, key: folderKeyOf(user, parent.entry.id) };
    const out = new Array<Resource>(entries.length);
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as NodeEntry;
      const resource: Resource = { path: childPath(parent.path, entry.name), kind: 'node', entry, chain: [...parent.chain, folderKeyOf(user, entry.id)], parent: holder };
      inheritFrom(parent, resource);
      out[i] = resource;
    }
    return out;
  }
}

/**
 * What a member of `parent` inherits: its top-level folder, and the shared node that decides
 * permissions (an entry directly in `shared_with_you` is that node itself).
 */
export function inheritFrom(parent: Resource, child: Resource): void {
  if (parent.top) child.top = parent.top;
  if (parent.shareRoot) child.shareRoot = parent.shareRoot;
  else if (parent.kind === 'top' && parent.top?.name === 'shared_with_you') child.shareRoot = child.entry.id;
}
