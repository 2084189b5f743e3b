/**
 * `/`: the seven top-level folders (one details call each, dated by them: the interface lists
 * none of them) and `groups` when the server has groups. `/webdrive/` and `/versions/` are there
 * for everyone, but `/webdrive/` is never listed (it would show every drive twice to a sync
 * tool) and `/versions/` only to Finder and Explorer (BridgeUser.listsVersions). The root holds
 * only fixed names, so a child's id follows from its name and nothing else is there. In the
 * client's view (client-view.ts) it shows `home`, `incoming` and `groups` only.
 */
import type { NodeEntry, NodeId } from '../../store-client/contract.js';
import type { Listing } from '../metadata-cache.js';
import { folder, GROUPS, groupsId, isTopLevelName, rootKey, TOP_LEVEL, WEBDRIVE, webdriveId } from '../namespace.js';
import type { BridgeUser } from '../sessions.js';
import { VERSIONS, versionsRootId } from '../versions-view.js';
import { clientViewOf } from './client-view.js';
import { madeUpMember, topMember, type Collection } from './collection.js';
import type { TreeContext } from './context.js';
import type { DavPath } from './paths.js';
import type { Resource } from './resource.js';
import { derivedTreeFields, groupsOf, topFolders } from './top-folders.js';

export class Root implements Collection {
  /** `isMadeUp`: whether an id is a made-up collection's (the resolver's kinds know). */
  constructor(
    private readonly ctx: TreeContext,
    private readonly isMadeUp: (id: string) => boolean,
    /** `/groups/`'s listing (its tree version is derived from it). */
    private readonly groupsListing: (user: BridgeUser) => Promise<Listing>,
  ) {}

  /** The root as the walk starts from it, before anything is listed. */
  base(user: BridgeUser): Resource {
    return { path: '/' as DavPath, kind: 'root', entry: folder('', ''), chain: [rootKey(user.userId)] };
  }

  /** The root stated: the bridge's own, it changes when a top-level folder does (its tree version derived from theirs). */
  async resource(user: BridgeUser, anyTree = false): Promise<Resource> {
    const base = this.base(user);
    const tops = clientViewOf(user, base, (await this.children(user, undefined, anyTree)).entries);
    const updatedMs = tops.reduce((latest, e) => Math.max(latest, e.updatedMs), 0);
    return { ...base, entry: { ...base.entry, updatedMs, ...derivedTreeFields(tops) } };
  }

  children(user: BridgeUser, _id?: NodeId, anyTree = false): Promise<Listing> {
    return this.ctx.cache.load(
      user.userId,
      rootKey(user.userId),
      async () => {
        const [tops, groups] = await Promise.all([topFolders(this.ctx, user, TOP_LEVEL.map((t) => [t, t as NodeId])), groupsOf(this.ctx, user)]);
        if (groups === undefined) return tops;
        const latest = tops.reduce((max, e) => Math.max(max, e.updatedMs), 0);
        const groupsTree = derivedTreeFields((await this.groupsListing(user)).entries);
        return [...tops, { ...folder(groupsId(user.userId), GROUPS, latest), ...groupsTree }];
      },
      anyTree,
    );
  }

  async child(user: BridgeUser, _id: NodeId, name: string, through: boolean, anyTree?: boolean): Promise<NodeEntry | undefined> {
    if (name === VERSIONS) return folder(versionsRootId(user.userId), VERSIONS);
    if (name === WEBDRIVE) return folder(webdriveId(user.userId), WEBDRIVE);
    if (name === GROUPS && through) return folder(groupsId(user.userId), GROUPS);
    // Finder's probes (`/.DS_Store`, `/._.`, `/Backups.backupdb`: docs/client-quirks.md §1) are
    // answered without building the root listing.
    if (!isTopLevelName(name) && name !== GROUPS) return undefined;
    // Walking through, a top-level folder is not asked for, unless the root's listing is cached anyway.
    if (through && isTopLevelName(name) && !this.ctx.cache.listing(user.userId, rootKey(user.userId), true)) return folder(name, name);
    return (await this.children(user, undefined, anyTree)).byName.get(name);
  }

  members(user: BridgeUser, parent: Resource, entries: readonly NodeEntry[]): Resource[] {
    return entries.map((entry) => (this.isMadeUp(entry.id) ? madeUpMember(user, parent, entry) : topMember(user, parent, entry)));
  }

  /** What list() shows beside the listing: `/versions/` to Finder and Explorer. */
  alsoListed(user: BridgeUser, root: Resource): NodeEntry[] {
    return user.listsVersions === true && user.clientView !== true ? [folder(versionsRootId(user.userId), VERSIONS, root.entry.updatedMs)] : [];
  }
}
