/**
 * `/groups/` (one collection per group of the caller, named by groupSegments: unique and
 * path-safe) and `/groups/<name>/` (the group's seven top-level folders, `home:<group>`, ...).
 * A group's top-level folder has an id that follows from its name, so a walk through one costs
 * no call (Group.child).
 */
import { LRUCache } from 'lru-cache';
import type { NodeEntry, NodeId } from '../../store-client/contract.js';
import type { Listing } from '../metadata-cache.js';
import { folder, GROUP_PREFIX, groupCollectionId, groupSegments, groupsId, isTopLevelName, TOP_LEVEL } from '../namespace.js';
import type { BridgeUser } from '../sessions.js';
import { listedChild, madeUpMember, topMember, type Collection } from './collection.js';
import type { TreeContext } from './context.js';
import type { Resource } from './resource.js';
import { groupsOf, topFolders, treeFieldsOf } from './top-folders.js';

/** How often a miss in a cached `/groups/` listing may list the caller's groups again. */
const RELIST_AFTER_MISS_MS = 1000;

/** `/groups/`. */
export class Groups implements Collection {
  /** When a miss last listed a user's groups again (bounded: a few bytes per recent user). */
  private readonly relisted = new LRUCache<string, number>({ max: 10_000 });

  constructor(
    private readonly ctx: TreeContext,
    private readonly now: () => number = () => performance.now(),
  ) {}

  children(user: BridgeUser, _id?: NodeId, anyTree = false): Promise<Listing> {
    const key = groupsId(user.userId);
    return this.ctx.cache.load(
      user.userId,
      key,
      async () => {
        const named = [...groupSegments((await groupsOf(this.ctx, user)) ?? [])];
        const homes = new Map((await topFolders(this.ctx, user, named.map(([, g]) => [g.id, `home:${g.id}` as NodeId]))).map((h) => [h.name, h]));
        // A group's collection shows its home's tree version: a change there outdates this listing too.
        for (const [, g] of named) this.ctx.cache.addParent(`home:${g.id}`, key);
        return named.map(([name, g]) => {
          const home = homes.get(g.id);
          return { ...folder(groupCollectionId(g.id), name, home?.updatedMs ?? 0), ...treeFieldsOf(home) };
        });
      },
      anyTree,
    );
  }

  /**
   * A name the cached listing lacks may be a group the caller joined since it was cached (the
   * store announces no membership): the groups are listed again, at most once a second per user,
   * so a person added to a group reaches its drive at once, and probes of names that are no group
   * cost at most one listing a second.
   */
  async child(user: BridgeUser, id: NodeId, name: string, _through: boolean, anyTree?: boolean): Promise<NodeEntry | undefined> {
    const found = await listedChild(this, user, id, name, anyTree);
    if (found) return found;
    const now = this.now();
    const last = this.relisted.get(user.userId);
    if (last !== undefined && now - last < RELIST_AFTER_MISS_MS) return undefined;
    this.relisted.set(user.userId, now);
    this.ctx.cache.forget(id);
    return listedChild(this, user, id, name, anyTree);
  }

  members(user: BridgeUser, parent: Resource, entries: readonly NodeEntry[]): Resource[] {
    return entries.map((entry) => madeUpMember(user, parent, entry));
  }
}

/** `/groups/<name>/`, id `group:<group uuid>`. */
export class Group implements Collection {
  constructor(private readonly ctx: TreeContext) {}

  children(user: BridgeUser, id: NodeId, anyTree = false): Promise<Listing> {
    const groupId = id.slice(GROUP_PREFIX.length);
    return this.ctx.cache.load(user.userId, id, () => topFolders(this.ctx, user, TOP_LEVEL.map((t) => [t, `${t}:${groupId}` as NodeId])), anyTree);
  }

  async child(user: BridgeUser, id: NodeId, name: string, through: boolean, anyTree?: boolean): Promise<NodeEntry | undefined> {
    // Walking through, a top-level folder is not asked for, unless the group's listing is cached anyway.
    if (through && isTopLevelName(name) && !this.ctx.cache.listing(user.userId, id, true)) return folder(`${name}:${id.slice(GROUP_PREFIX.length)}`, name);
    return listedChild(this, user, id, name, anyTree);
  }

  members(user: BridgeUser, parent: Resource, entries: readonly NodeEntry[]): Resource[] {
    return entries.map((entry) => topMember(user, parent, entry));
  }
}
