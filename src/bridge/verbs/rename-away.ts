/**
 * Saves by rename-away (docs/bridge-design.md "Saves"): Word over the Windows WebClient, on some
 * setups, saves by renaming the document away to `~WRL<n>.tmp` (MOVE, Overwrite: F), renaming its
 * temp `~WRD<n>.tmp` into the freed name (MOVE, Overwrite: F) and deleting the backup. No step
 * lands on an existing file, so without this the name would go to the temp's node and the
 * document (its UUID, revisions, shares, links) to the trash. What this module owns:
 * - a MOVE of a file within its folder to an editor's backup name (contracts/renamed-away.ts:
 *   `~<…>.tmp`) is remembered, per user and folder, with the file's revision;
 * - a MOVE or COPY of another file onto the name it left, by the same user within a minute,
 *   while the document still sits at the backup name at that revision, makes the moved content
 *   the document's next revision and gives the document its name back (StoreTree.restoreRenamedAway);
 * - the client's DELETE of the backup name then answers 204 and changes nothing.
 * Anything else (another user, folder or name, the document changed or gone, the window
 * passed, a lock, a refusal) leaves the request to do what it always did. The memos live where
 * the dead properties live (store/storage/dav-state.ts), so the steps may reach any instance.
 */
import { isEditorBackupName, RENAME_AWAY_WINDOW_MS } from '../../contracts/renamed-away.js';
import { StoreError } from '../../store-client/index.js';
import { DavStatusError } from '../dav-errors.js';
import { nameOf, parentOf, segmentsOf, toDavPath, type Resource } from '../store-tree.js';
import type { DavContext } from '../request/context.js';
import type { Transfer } from './destination.js';
import { checkLocks, type WriteTarget } from '../request/preconditions.js';

/** After a MOVE that created its destination: remembers it when it renamed a file away to a backup name. */
export async function rememberRenameAway(ctx: DavContext, transfer: Transfer): Promise<void> {
  const { source, destination, user } = transfer;
  if (source.entry.kind !== 'file' || source.kind !== 'node' || !source.parent || destination.resource || !destination.parent) return;
  const backup = nameOf(destination.path);
  const name = source.entry.name.normalize('NFC');
  if (!isEditorBackupName(backup) || isEditorBackupName(name)) return;
  if (ctx.services.tree.folderKey(user, destination.parent.entry.id) !== source.parent.key) return;
  const atMs = ctx.services.clock.now();
  try {
    await ctx.services.renamedAway.remember(
      { kind: 'away', userId: user.userId, folder: source.parent.key, name, nodeId: source.entry.id, otherName: backup, revision: source.entry.revision, atMs },
      atMs - RENAME_AWAY_WINDOW_MS,
    );
  } catch (err) {
    // The MOVE is done; a later save over the name then replaces as before.
    ctx.log.warn({ err }, 'could not remember a rename to a backup name');
  }
}

/**
 * Before a MOVE (`consume`) or COPY of a file onto a free name: when that completes a
 * rename-away, does it and returns the document now at the destination; otherwise undefined,
 * having changed nothing, and the verb goes on as before.
 */
export async function completeRenameAway(ctx: DavContext, transfer: Transfer, consume: boolean): Promise<Resource | undefined> {
  const { source, destination, user } = transfer;
  const parentKind = destination.parent?.kind;
  if (source.entry.kind !== 'file' || destination.resource || !destination.parent || (parentKind !== 'node' && parentKind !== 'top')) return undefined;
  const { tree, renamedAway, cache, clock } = ctx.services;
  const folder = tree.folderKey(user, destination.parent.entry.id);
  const name = nameOf(destination.path);
  const nowMs = clock.now();
  const memo = await renamedAway.take('away', user.userId, folder, name, nowMs - RENAME_AWAY_WINDOW_MS);
  if (!memo) return undefined;
  // Listed afresh: the rename away may have gone through another instance.
  cache.forget(folder);
  const original = await tree.tryStat(user, toDavPath([...segmentsOf(parentOf(destination.path)), memo.otherName]));
  if (!original || original.entry.id !== memo.nodeId || original.entry.kind !== 'file' || original.entry.revision !== memo.revision || original.entry.id === source.entry.id) {
    ctx.log.info({ name, backup: memo.otherName }, 'rename-away: the document left its backup name or changed; saved as a new file');
    return undefined;
  }
  try {
    await checkLocks(ctx, original.chain);
    await tree.restoreRenamedAway(user, source, original, destination.path, consume);
  } catch (err) {
    if (!isRefusal(err)) throw err;
    ctx.log.info({ err, name, backup: memo.otherName }, 'rename-away: the new revision was refused; saved as a new file');
    return undefined;
  }
  try {
    await renamedAway.remember(
      { kind: 'restored', userId: user.userId, folder, name: memo.otherName, nodeId: memo.nodeId, otherName: name, revision: undefined, atMs: nowMs },
      nowMs - RENAME_AWAY_WINDOW_MS,
    );
  } catch (err) {
    // The save is done; the client's DELETE of the backup name then answers 404, which Word ignores.
    ctx.log.warn({ err }, 'could not remember a restored backup name');
  }
  return (await tree.tryStat(user, destination.path)) ?? original;
}

/**
 * DELETE of an editor's backup name: true (answer 204, delete nothing) when it is the name a save
 * by rename-away just gave back. Asked whether or not this bridge sees something there: its
 * listing may predate the save, made through another instance, and show the document under the
 * backup name still; deleting by it would trash the document just saved.
 */
export async function isRestoredBackup(ctx: DavContext, target: WriteTarget): Promise<boolean> {
  if (!isEditorBackupName(nameOf(target.path))) return false;
  const user = ctx.user();
  const { tree, renamedAway, clock } = ctx.services;
  const folder = target.resource ? target.resource.parent?.key : target.parent && tree.folderKey(user, target.parent.entry.id);
  if (folder === undefined) return false;
  const nowMs = clock.now();
  const memo = await renamedAway.take('restored', user.userId, folder, nameOf(target.path), nowMs - RENAME_AWAY_WINDOW_MS);
  if (!memo) return false;
  if (!target.resource) return true;
  if (target.resource.entry.id !== memo.nodeId) return false;
  // What this bridge saw is gone from there: list afresh for the next request.
  ctx.services.cache.forget(folder);
  return true;
}

/** The statuses of the refusals below where the bridge makes them itself (tree/: DavStatusError), as the store's kinds map to them. */
const REFUSAL_STATUSES = new Set([400, 403, 404, 409, 412, 423, 507]);

/** What makes a rename-away fall back to a plain MOVE or COPY: a refusal that changed nothing. */
function isRefusal(err: unknown): boolean {
  if (err instanceof DavStatusError) return REFUSAL_STATUSES.has(err.status);
  return err instanceof StoreError && ['forbidden', 'quota', 'conflict', 'not-found', 'invalid'].includes(err.kind);
}
