/**
 * Deletes and the trash: a DELETE (into the owner's trash, or for good inside it or below a
 * "delete for good" folder, as the store decides), with a file's AppleDouble twin; the purge of
 * the bridge's own staging folders; the restore of a trash entry to where it was deleted from;
 * the "delete for good" mark; a star taken off (DELETE in `favorites`). Removals of one node run
 * one at a time (in this process), so two racing ones never erase a node from the trash.
 */
import { StoreError, type NodeId, type Removal } from '../../store-client/contract.js';
import type { KeyedQueue } from '../../common/keyed-queue.js';
import { appleDoubleOf } from '../../common/side-files.js';
import { DavStatusError } from '../dav-errors.js';
import { siblingTopId, topLevelOfId } from '../namespace.js';
import type { BridgeUser } from '../sessions.js';
import { withSession, type TreeContext } from './context.js';
import type { Grants } from './grants.js';
import { folderKeyOf, parentOf, segmentsOf, toDavPath, trashKeyOf, type DavPath } from './paths.js';
import type { Resolver } from './resolver.js';
import { fixedPathRefused, type Resource } from './resource.js';

export interface TrashOptions {
  /** bridge.hideMacSideFiles: a file's `._` twin follows its MOVE and DELETE (common/side-files.ts). */
  followsAppleDouble: boolean;
  /** Works queued per key: removals of a node here, transfers onto a name (transfers.ts). */
  queues: KeyedQueue;
}

export class Trash {
  constructor(
    private readonly ctx: TreeContext,
    private readonly resolver: Resolver,
    private readonly grants: Grants,
    private readonly options: TrashOptions,
  ) {}

  /**
   * Deletes (into trash; for good inside trash or below a "delete for good" folder, as the store
   * decides, and says: `forGood`). `withTwin` (a client's DELETE): a file's AppleDouble `._` twin
   * goes the same way, after it (twinOf).
   */
  async remove(user: BridgeUser, resource: Resource, options: { withTwin?: boolean } = {}): Promise<Removal> {
    if (resource.kind !== 'node' || !resource.parent) throw fixedPathRefused();
    const twin = options.withTwin ? await this.twinOf(user, resource) : undefined;
    const removal = await this.removeOne(user, resource);
    if (twin) {
      try {
        await this.removeOne(user, twin);
      } catch (err) {
        // The file is gone as asked; a twin left behind is only Finder's metadata.
        this.ctx.log?.warn({ err, id: twin.entry.id }, 'could not delete the AppleDouble twin of a deleted file');
      }
    }
    return removal;
  }

  /**
   * The AppleDouble twin (`._<name>`) of a file, as its folder's listing has it (cached: the
   * request stated the file through that listing); undefined for a folder, a side file, a file
   * without one, or when bridge.hideMacSideFiles is off (side files are ordinary files then).
   */
  async twinOf(user: BridgeUser, resource: Resource): Promise<Resource | undefined> {
    if (!this.options.followsAppleDouble || resource.kind !== 'node' || !resource.parent || resource.entry.kind !== 'file') return undefined;
    const twinName = appleDoubleOf(resource.entry.name);
    if (twinName === undefined) return undefined;
    const entry = (await this.resolver.listing(user, resource.parent.id)).byName.get(twinName);
    if (!entry || entry.kind !== 'file') return undefined;
    const twin: Resource = {
      path: toDavPath([...segmentsOf(parentOf(resource.path)), twinName]),
      kind: 'node',
      entry,
      chain: [...resource.chain.slice(0, -1), folderKeyOf(user, entry.id)],
      parent: resource.parent,
    };
    if (resource.top) twin.top = resource.top;
    if (resource.shareRoot) twin.shareRoot = resource.shareRoot;
    return twin;
  }

  private async removeOne(user: BridgeUser, resource: Resource): Promise<Removal> {
    if (resource.kind !== 'node' || !resource.parent) throw fixedPathRefused();
    const id = resource.entry.id;
    // The store's DELETE of a node already in trash deletes it for good. A removal meant to
    // trash (anything not reached through /trash) that races another one of the same node (two
    // DELETEs, a DELETE and an overwrite, two overwrites of one destination: the second acts on
    // what it stated before the first ran) must find it gone (404), not erase it from the trash.
    const removal = await this.options.queues.run(`remove ${id}`, async () => {
      if (resource.top && resource.top.name !== 'trash') await this.assertOutsideTrash(user, id);
      return withSession(user, (s) => this.ctx.client.remove(s, id));
    });
    this.grants.afterWrite(user, resource.top?.id);
    this.ctx.cache.forget(resource.parent.key);
    this.ctx.cache.forget(trashKeyOf(user, resource.top?.id));
    if (resource.entry.kind === 'folder') this.ctx.cache.forget(folderKeyOf(user, resource.entry.id));
    return removal;
  }

  /** 404 when `id` lies in trash now (a concurrent removal got there first): nothing is removed then. */
  private async assertOutsideTrash(user: BridgeUser, id: NodeId): Promise<void> {
    const path = await withSession(user, (s) => this.ctx.client.path(s, id));
    const top = path[0];
    if (top && (topLevelOfId(top.id) === 'trash' || top.name === 'trash')) throw new NodeDeletedMeanwhile();
  }

  /** Deletes a node for good, best effort: into trash, then from trash (the store's two-step delete). */
  async purge(user: BridgeUser, id: NodeId, topId?: NodeId): Promise<void> {
    try {
      // Below a "delete for good" folder the first step is the last.
      if ((await withSession(user, (s) => this.ctx.client.remove(s, id))).forGood !== true) await withSession(user, (s) => this.ctx.client.remove(s, id));
    } catch (err) {
      this.ctx.log?.warn({ err, id }, 'could not remove a staging folder');
    }
    this.ctx.cache.forget(trashKeyOf(user, topId));
  }

  /**
   * Sets or takes off the caller's star on a node (PROPPATCH of oc:favorite; DELETE of an entry
   * of `favorites` takes it off, the node stays). The listings showing it are re-read: its
   * folder's (forgotten for every user: a star is per user, so no one's listing is patched with
   * another's) and the caller's `favorites` (a group's node: the group's too).
   */
  async setStarred(user: BridgeUser, resource: Resource, on: boolean, signal?: AbortSignal): Promise<void> {
    await withSession(user, (s) => this.ctx.client.setStarred(s, resource.entry.id, on, signal));
    if (resource.parent) this.ctx.cache.forget(resource.parent.key);
    this.ctx.cache.forget(folderKeyOf(user, 'favorites' as NodeId));
    // A group's node is listed in the group's `favorites:<group>`.
    if (resource.top) this.ctx.cache.forget(folderKeyOf(user, siblingTopId(resource.top.id, 'favorites')));
  }

  /**
   * Sets a folder's "delete for good" mark in the store (PROPPATCH of driveway's skip-trash
   * property). Answers the status the property gets (200; 403 refused; 409 over a store without
   * the extension or for something that cannot carry it) and the mark before, to put it back.
   */
  async setSkipTrash(user: BridgeUser, folder: Resource, on: boolean): Promise<{ status: number; previous?: boolean }> {
    try {
      const previous = (await withSession(user, (s) => this.ctx.client.details(s, folder.entry.id))).skipTrash === true;
      await withSession(user, (s) => this.ctx.client.setSkipTrash(s, folder.entry.id, on));
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
      throw new DavStatusError(403, 'only an entry of a trash folder is restored');
    }
    if (!entry.entry.trashed) throw new DavStatusError(409, 'the store does not say where this came from; MOVE it to a folder instead');
    try {
      const restored = await withSession(user, (s) => this.ctx.client.restoreFromTrash(s, entry.entry.id));
      this.ctx.cache.forget(folderKeyOf(user, restored.parent));
      const prefix = segmentsOf(entry.path).slice(0, -2);
      return { path: toDavPath([...prefix, ...restored.parentPath, restored.name]) };
    } finally {
      this.grants.afterWrite(user, entry.top.id);
      this.ctx.cache.forget(entry.parent.key);
    }
  }
}

/** A removal meant for the trash found the node there already (a parallel one got there first): 404. */
export class NodeDeletedMeanwhile extends DavStatusError {
  constructor() {
    super(404, 'the node was deleted meanwhile');
  }
}
