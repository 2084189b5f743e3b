/**
 * MOVE and COPY through the interface's small steps (rename, move_to, copy_to, DELETE), with
 * their undo steps: a transfer that fails at any step leaves the tree as it was (best effort),
 * the replaced target included (docs/bridge-design.md "A refusal changes nothing"; each step has
 * a unit test: test/unit/bridge/transfers.test.ts). A file onto a file is a save instead: a new
 * revision of the target (revisions.ts). Transfers onto one name of one folder run one at a
 * time (in this process), each stating what is in the way after the one before finished.
 */
import { randomBytes } from 'node:crypto';
import type { KeyedQueue } from '../../common/keyed-queue.js';
import { appleDoubleOf } from '../../common/side-files.js';
import { StoreError, type NodeId, type Removal, type StoreSession } from '../../store-client/contract.js';
import { DavStatusError } from '../dav-errors.js';
import type { FolderKey } from '../metadata-cache.js';
import { withMacSideFiles, type BridgeUser } from '../sessions.js';
import { withSession, type TreeContext } from './context.js';
import type { Files } from './files.js';
import type { Grants } from './grants.js';
import { folderKeyOf, nameOf, parentOf, segmentsOf, toDavPath, trashKeyOf, type DavPath } from './paths.js';
import type { Resolver } from './resolver.js';
import { fixedPathRefused, type Resource } from './resource.js';
import type { Revisions } from './revisions.js';
import { ALL_ENTRIES, STAGING_PREFIX } from './store-folder.js';
import { NodeDeletedMeanwhile, type Trash } from './trash.js';

/**
 * A MOVE or COPY of `source` onto `existing` that makes a new revision of `existing` instead of
 * replacing it: a file onto a file. Anything involving a collection replaces, as before.
 */
export function revisesInPlace(source: Resource, existing: Resource): boolean {
  return source.entry.kind === 'file' && existing.entry.kind === 'file' && existing.kind === 'node';
}

/** What serialises MOVE and COPY onto one name of one folder. */
function destinationKey(folder: FolderKey, to: DavPath): string {
  return `to ${folder}/${nameOf(to)}`;
}

/** A hidden name for a node on its way (listings leave it out). */
function stagingName(): string {
  return `${STAGING_PREFIX}${randomBytes(6).toString('hex')}`;
}

export interface TransferRooms {
  resolver: Resolver;
  grants: Grants;
  files: Files;
  trash: Trash;
  revisions: Revisions;
  /** Works queued per key: transfers onto a name here, removals of a node (trash.ts). */
  queues: KeyedQueue;
}

export class Transfers {
  constructor(
    private readonly ctx: TreeContext,
    private readonly rooms: TransferRooms,
  ) {}

  /**
   * Moves `source` to `to`: a rename, a move into another folder, or both (in an order that
   * avoids a passing name clash). An existing target (when `overwrite`) is replaced only once
   * the store has accepted the move: the source first goes into the target folder under a
   * hidden passing name, then the target goes to the trash, then the source takes its name.
   * When a step fails (refused, or the store unreachable), the steps made are undone (best
   * effort), the last one included: the target comes back out of the trash (putBack).
   */
  async move(user: BridgeUser, source: Resource, to: DavPath, overwrite: boolean): Promise<{ replaced: boolean }> {
    if (source.kind !== 'node' || !source.parent) throw fixedPathRefused();
    const targetParent = await this.rooms.resolver.parentFolder(user, to);
    const twin = await this.rooms.trash.twinOf(user, source);
    // One MOVE or COPY onto a destination at a time (in this process): each states what is in
    // the way once the one before it has finished, so two replacing the same name queue up
    // instead of both trashing the same old node and one leaving its node under a staging name.
    const moved = await this.rooms.queues.run(destinationKey(folderKeyOf(user, targetParent.entry.id), to), () => this.moveInto(user, source, targetParent, to, overwrite));
    // The file's `._` twin (Finder's metadata of it) follows, replacing the destination's.
    const twinName = appleDoubleOf(nameOf(to));
    if (twin && twinName !== undefined) {
      try {
        await this.move(withMacSideFiles(user), twin, toDavPath([...segmentsOf(parentOf(to)), twinName]), true);
      } catch (err) {
        this.ctx.log?.warn({ err, id: twin.entry.id }, 'could not move the AppleDouble twin of a moved file');
      }
    }
    return moved;
  }

  private async moveInto(user: BridgeUser, source: Resource, targetParent: Resource, to: DavPath, overwrite: boolean): Promise<{ replaced: boolean }> {
    if (source.kind !== 'node' || !source.parent) throw fixedPathRefused();
    const { client, cache } = this.ctx;
    const { resolver, grants } = this.rooms;
    const existing = await this.targetInTheWay(user, to, overwrite, source);
    if (existing && revisesInPlace(source, existing)) {
      await this.rooms.revisions.reviseInto(user, source, existing, true);
      return { replaced: true };
    }
    const newName = nameOf(to);
    const oldName = source.entry.name;
    const fromId = source.parent.id;
    const toId = targetParent.entry.id;
    const id = source.entry.id;
    const undo: Array<(s: StoreSession) => Promise<void>> = [];
    const rename = async (name: string, back: string): Promise<void> => {
      await withSession(user, (s) => client.rename(s, id, name));
      undo.push((s) => client.rename(s, id, back));
    };
    const moveTo = async (folder: NodeId, back: NodeId): Promise<void> => {
      await withSession(user, (s) => client.moveInto(s, id, folder));
      undo.push((s) => client.moveInto(s, id, back));
    };
    // The name the source has in the target folder before the swap: the final one when nothing
    // is in the way; else its own name when that is free there, else a hidden passing name.
    let placed = newName;
    if (existing) placed = toId !== fromId && !(await resolver.listing(user, toId)).byName.has(oldName) ? oldName : stagingName();
    // Set once the replaced target went to the trash: a failure after that puts it back.
    let removal: Removal | undefined;
    try {
      if (toId === fromId) {
        if (placed !== oldName) await rename(placed, oldName);
      } else if (placed === oldName) {
        await moveTo(toId, fromId);
      } else {
        const targetListing = await resolver.listing(user, toId);
        const sourceListing = await resolver.listing(user, fromId);
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
        if (placed !== newName) await withSession(user, (s) => client.rename(s, id, newName));
      }
    } catch (err) {
      await this.undoSteps(user, undo, id);
      if (existing && removal) await this.putBack(user, existing, removal);
      throw err;
    } finally {
      // A move between a user's and a group's tree moves usage between them.
      if (source.top?.id !== targetParent.top?.id) grants.afterWrite(user, source.top?.id, targetParent.top?.id);
      cache.forget(source.parent.key);
      cache.forget(folderKeyOf(user, toId));
    }
    return { replaced: existing !== undefined };
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
    if (source.kind === 'root') throw new DavStatusError(403, 'the root cannot be copied');
    const targetParent = await this.rooms.resolver.parentFolder(user, to);
    // One at a time per destination, as for move().
    return this.rooms.queues.run(destinationKey(folderKeyOf(user, targetParent.entry.id), to), () => this.copyInto(user, source, targetParent, to, overwrite, options));
  }

  private async copyInto(user: BridgeUser, source: Resource, targetParent: Resource, to: DavPath, overwrite: boolean, options: { shallow?: boolean }): Promise<{ replaced: boolean }> {
    const { client, cache } = this.ctx;
    const existing = await this.targetInTheWay(user, to, overwrite, source);
    if (existing && revisesInPlace(source, existing)) {
      await this.rooms.revisions.reviseInto(user, source, existing, false);
      return { replaced: true };
    }
    const shallow = options.shallow === true && source.entry.kind === 'folder';
    if (shallow && !existing) {
      await this.rooms.files.mkdir(user, targetParent, nameOf(to));
      return { replaced: false };
    }
    const newName = nameOf(to);
    const targetId = targetParent.entry.id;
    const run = (call: (s: StoreSession) => Promise<void>) => withSession(user, call);
    try {
      const targetListing = await this.rooms.resolver.listing(user, targetId);
      if (!existing && newName === source.entry.name && !targetListing.byName.has(newName)) {
        await run((s) => client.copyInto(s, source.entry.id, targetId));
        return { replaced: false };
      }
      const staged = stagingName();
      await run((s) => client.createFolder(s, targetId, staged));
      const staging = (await withSession(user, (s) => client.listFolder(s, targetId, undefined, ALL_ENTRIES))).find((e) => e.name === staged);
      if (!staging) throw new StoreError('bad-response', 'tree.copy', undefined, 'staging folder not listed after creation');
      // Set once the replaced target went to the trash: a failure after that puts it back.
      let removal: Removal | undefined;
      try {
        if (shallow) await run((s) => client.createFolder(s, staging.id, newName));
        else await run((s) => client.copyInto(s, source.entry.id, staging.id));
        const copied = (await withSession(user, (s) => client.listFolder(s, staging.id, undefined, ALL_ENTRIES)))[0];
        if (!copied) throw new StoreError('bad-response', 'tree.copy', undefined, 'copy not listed in the staging folder');
        if (copied.name !== newName) await run((s) => client.rename(s, copied.id, newName));
        if (existing) removal = await this.removeReplaced(user, existing);
        await run((s) => client.moveInto(s, copied.id, targetId));
      } catch (err) {
        if (existing && removal) await this.putBack(user, existing, removal);
        throw err;
      } finally {
        await this.rooms.trash.purge(user, staging.id, targetParent.top?.id);
      }
    } finally {
      this.rooms.grants.afterWrite(user, targetParent.top?.id);
      cache.forget(folderKeyOf(user, targetId));
    }
    return { replaced: existing !== undefined };
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
    const { resolver, revisions, queues } = this.rooms;
    const targetParent = await resolver.parentFolder(user, to);
    await queues.run(destinationKey(folderKeyOf(user, targetParent.entry.id), to), async () => {
      if (await resolver.tryStat(user, to)) throw new DavStatusError(412, 'destination exists');
      await revisions.reviseInto(user, source, original, consume);
      try {
        await withSession(user, (s) => this.ctx.client.rename(s, original.entry.id, nameOf(to)));
      } catch (err) {
        this.ctx.log?.error({ err, id: original.entry.id, name: nameOf(to), placed: original.entry.name }, 'a save by rename-away made its revision but the document could not take its name back');
        throw err;
      } finally {
        if (original.parent) this.ctx.cache.forget(original.parent.key);
      }
    });
  }

  /**
   * What is at `to` and will be replaced (nothing is removed here: the caller replaces it once
   * the store accepted the new content). 412 when something is there and `overwrite` is false;
   * 403 for the source itself or a fixed resource.
   */
  private async targetInTheWay(user: BridgeUser, to: DavPath, overwrite: boolean, source: Resource): Promise<Resource | undefined> {
    const existing = await this.rooms.resolver.tryStat(user, to);
    if (!existing) return undefined;
    if (existing.entry.id === source.entry.id) throw new DavStatusError(403, 'source and destination are the same resource');
    if (!overwrite) throw new DavStatusError(412, 'destination exists');
    if (existing.kind !== 'node' || !existing.parent) throw fixedPathRefused();
    return existing;
  }

  /** Trashes the destination a MOVE or COPY replaces; one deleted meanwhile (by a DELETE) is a conflict, and nothing changes. */
  private async removeReplaced(user: BridgeUser, existing: Resource): Promise<Removal> {
    try {
      return await this.rooms.trash.remove(user, existing);
    } catch (err) {
      if (err instanceof NodeDeletedMeanwhile || (err instanceof StoreError && err.kind === 'not-found')) {
        throw new DavStatusError(409, 'the destination was deleted while the request ran');
      }
      throw err;
    }
  }

  /** Runs the undo steps of a failed multi-step change, last first; stops at the first that fails. */
  private async undoSteps(user: BridgeUser, undo: Array<(s: StoreSession) => Promise<void>>, id: NodeId): Promise<void> {
    for (const step of undo.reverse()) {
      try {
        await withSession(user, step);
      } catch (undoErr) {
        this.ctx.log?.warn({ err: undoErr, id }, 'could not undo a step of a failed move or copy');
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
      this.ctx.log?.error({ id, name: replaced.entry.name }, 'a MOVE or COPY failed after the target it replaced was deleted for good');
      return;
    }
    try {
      await withSession(user, (s) => this.ctx.client.moveInto(s, id, parent.id));
      await withSession(user, (s) => this.ctx.client.rename(s, id, replaced.entry.name));
    } catch (err) {
      this.ctx.log?.error({ err, id, name: replaced.entry.name }, 'a MOVE or COPY failed after the target it replaced went to the trash; the target stays there');
    } finally {
      this.ctx.cache.forget(parent.key);
      this.ctx.cache.forget(trashKeyOf(user, replaced.top?.id));
    }
  }
}
