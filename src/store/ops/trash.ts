/**
 * The trash and "delete for good" extensions (docs/extensions.md "Trash and revisions from a
 * client"): what a trash listing tells about each entry (where it came from, when it was
 * deleted), the restore to that place, and the folder mark that makes deletes below it skip the
 * trash. Access through access.ts as every route: a node the caller may not see is 404. HTTP
 * (routes/nodes.ts) and the in-process client (local-client.ts) both call it.
 */
import { z } from 'zod';
import { assertMayActAsOwner, resolveNode, resolveNodeAccess } from '../access.js';
import type { StoreContext } from '../context.js';
import { conflict, forbidden, invalid } from '../envelope.js';
import { getNode, getTopLevel, publicId, topKindOf, type NodeRow } from '../storage/nodes.js';
import type { Sql } from '../storage/sql.js';
import { hasSkipTrash, originOf, setSkipTrash, trashedChildren, trashedRow } from '../storage/trash.js';
import type { AuthenticatedUser } from '../sessions.js';
import { restoreInto, writesOf } from './tree.js';

/** What a dirlist entry of a trash folder carries beside the interface's fields. */
export interface TrashFacts {
  /** The folder it was deleted from (its id), null when that folder is gone or lies in trash. */
  from: string | null;
  /** That folder as names from its top-level folder, joined by `/` (`home/docs`); null when unknown. */
  from_path: string | null;
  /** Its name before the deletion (a trash entry is renamed `name (2).ext` on a clash). */
  name: string;
  /** When it was deleted, ms since the epoch; null for a node deleted before this was recorded. */
  at: number | null;
}

/**
 * The deletion facts of every entry of trash folder `trash`, by UUID: one query for the entries,
 * then one walk per distinct origin folder (entries deleted from one folder share it).
 */
export async function trashFactsOf(sql: Sql, trash: NodeRow, callerUuid: string): Promise<Map<string, TrashFacts>> {
  const rows = await trashedChildren(sql, trash.uuid);
  const origins = new Map<string, Promise<Awaited<ReturnType<typeof originOf>>>>();
  const out = new Map<string, TrashFacts>();
  for (const row of rows) {
    const key = row.trashed_from ?? '';
    if (!origins.has(key)) origins.set(key, originOf(sql, row.trashed_from));
  }
  for (const row of rows) {
    // A folder that went to another owner since is not shown: its names are that owner's.
    const found = await origins.get(row.trashed_from ?? '');
    const origin = found?.ownerUuid === trash.owner_uuid ? found : undefined;
    const name = row.trashed_name ?? (await getNode(sql, row.uuid))?.name ?? '';
    out.set(row.uuid, {
      from: origin?.folder ? publicId(origin.folder, callerUuid) : null,
      from_path: origin ? origin.names.join('/') : null,
      name,
      at: row.trashed_at === null ? null : Number(row.trashed_at),
    });
  }
  return out;
}

/** What POST /api/nodes/{id}/restore answers. */
export interface RestoreResult {
  uuid: string;
  name: string;
  /** The folder it went back to (its id), and that folder as names from its top-level folder. */
  parent: string;
  parent_path: string;
}

/**
 * Puts a node lying directly in trash back where it was deleted from, under its name of then
 * (numbered when taken), or into its owner's home when that folder is gone or in trash itself.
 * Needs `write` on the node and on the folder it goes to (403 otherwise: never put somewhere else
 * instead); 409 `not_in_trash` for a node that is not an entry of a trash folder.
 */
export async function restoreFromTrash(ctx: StoreContext, caller: AuthenticatedUser, id: string): Promise<RestoreResult> {
  return ctx.storage.sql.transaction(async (tx) => {
    const node = await resolveNode(tx, caller, id, 'write');
    const parent = node.parent_uuid === null ? undefined : await getNode(tx, node.parent_uuid);
    if (parent?.top_kind !== 'trash') throw conflict('only an entry of a trash folder can be restored', 'not_in_trash');
    const facts = await trashedRow(tx, node.uuid);
    const found = await originOf(tx, facts?.trashed_from ?? null);
    // A folder that went to another owner since counts as gone: the node goes home.
    const origin = found?.ownerUuid === node.owner_uuid ? found : undefined;
    let target = origin?.folder;
    let names = origin?.names;
    if (!target) {
      target = await getTopLevel(tx, node.owner_uuid, 'home');
      if (!target) throw new Error(`owner ${node.owner_uuid} has no home folder`);
      names = ['home'];
    }
    // The caller's access to the target, decided where every door's is.
    const granted = await resolveNode(tx, caller, publicId(target, caller.userUuid), 'write');
    const name = await restoreInto({ sql: tx, now: ctx.clock.now(), callerUuid: caller.userUuid }, node, granted, facts?.trashed_name ?? node.name);
    return { uuid: node.uuid, name, parent: publicId(granted, caller.userUuid), parent_path: (names ?? []).join('/') };
  }, writesOf(caller.userUuid));
}

const skipTrashBodySchema = z.object({ skip_trash: z.boolean() }).strict();

/**
 * Marks a folder (or clears the mark) so that every DELETE below it by the owner's side removes
 * the node for good instead of moving it to the trash. Needs `delete` on the folder of the
 * caller's own (access.ts mayActAsOwner `skip-trash`: the owner, a member of the owning group
 * holding `delete`): whoever may delete there so may already empty what they delete from the
 * trash. A share's recipient may not (403), whatever the share grants: the trash is the owner's.
 * A user's or group's `home`, `incoming` and any folder in them may carry it; trash and the
 * derived folders not (403 `virtual_folder`).
 */
export async function setSkipTrashOf(ctx: StoreContext, caller: AuthenticatedUser, id: string, body: unknown): Promise<{ skip_trash: boolean }> {
  const parsed = skipTrashBodySchema.safeParse(body);
  if (!parsed.success) throw invalid('the body must be {"skip_trash": true|false}');
  const on = parsed.data.skip_trash;
  await ctx.storage.sql.transaction(async (tx) => {
    const { node: folder, access } = await resolveNodeAccess(tx, caller, id, 'delete');
    assertMayActAsOwner(access, 'skip-trash');
    if (folder.type !== 'Dir') throw conflict('the node is not a folder', 'not_a_folder');
    const top = folder.top_kind ?? (await topKindOf(tx, folder));
    if (top !== 'home' && top !== 'incoming') throw forbidden(`a folder in ${top ?? 'this place'} cannot be marked`, 'virtual_folder');
    await setSkipTrash(tx, folder.uuid, on);
  }, writesOf(caller.userUuid));
  return { skip_trash: on };
}

/** Whether a folder itself carries the mark (node details show it). */
export function skipsTrash(ctx: StoreContext, node: NodeRow): Promise<boolean> {
  return node.type === 'Dir' ? hasSkipTrash(ctx.storage.sql, node.uuid) : Promise.resolve(false);
}
