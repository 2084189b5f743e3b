/**
 * `/groups/` (one collection per group of the caller, named by groupSegments: unique and
 * path-safe) and `/groups/<name>/` (the group's seven top-level folders, `home:<group>`, ...).
 * A group's top-level folder has an id that follows from its name, so a walk through one costs
 * no call (Group.child).
 */
import type { NodeEntry, NodeId } from '../../store-client/contract.js';
import type { Listing } from '../metadata-cache.js';
import { folder, GROUP_PREFIX, groupCollectionId, groupSegments, groupsId, isTopLevelName, TOP_LEVEL } from '../namespace.js';
import type { BridgeUser } from '../sessions.js';
import { listedChild, madeUpMember, topMember, type Collection } from './collection.js';
import type { TreeContext } from './context.js';
import type { Resource } from './resource.js';
import { groupsOf, topFolders } from './top-folders.js';

/** `/groups/`. */
export class Groups implements Collection {
  constructor(private readonly ctx: TreeContext) {}

  children(user: BridgeUser): Promise<Listing> {
    return this.ctx.cache.load(user.userId, groupsId(user.userId), async () => {
      const named = [...groupSegments((await groupsOf(this.ctx, user)) ?? [])];
      const homes = await topFolders(this.ctx, user, named.map(([, g]) => [g.id, `home:${g.id}` as NodeId]));
      const updated = new Map(homes.map((h) => [h.name, h.updatedMs]));
      return named.map(([name, g]) => folder(groupCollectionId(g.id), name, updated.get(g.id) ?? 0));
    });
  }

  child(user: BridgeUser, id: NodeId, name: string): Promise<NodeEntry | undefined> {
    return listedChild(this, user, id, name);
  }

  members(user: BridgeUser, parent: Resource, entries: readonly NodeEntry[]): Resource[] {
    return entries.map((entry) => madeUpMember(user, parent, entry));
  }
}

/** `/groups/<name>/`, id `group:<group uuid>`. */
export class Group implements Collection {
  constructor(private readonly ctx: TreeContext) {}

  children(user: BridgeUser, id: NodeId): Promise<Listing> {
    const groupId = id.slice(GROUP_PREFIX.length);
    return this.ctx.cache.load(user.userId, id, () => topFolders(this.ctx, user, TOP_LEVEL.map((t) => [t, `${t}:${groupId}` as NodeId])));
  }

  async child(user: BridgeUser, id: NodeId, name: string, through: boolean): Promise<NodeEntry | undefined> {
    // Walking through, a top-level folder is not asked for, unless the group's listing is cached anyway.
    if (through && isTopLevelName(name) && !this.ctx.cache.listing(user.userId, id)) return folder(`${name}:${id.slice(GROUP_PREFIX.length)}`, name);
    return listedChild(this, user, id, name);
  }

  members(user: BridgeUser, parent: Resource, entries: readonly NodeEntry[]): Resource[] {
    return entries.map((entry) => topMember(user, parent, entry));
  }
}
