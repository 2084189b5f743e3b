/**
 * A new revision of a file made from another file's latest revision (docs/extensions.md "Revision
 * from another file"): what the bridge asks for when a client saves by MOVE or COPY of a temp file
 * over the original with `Overwrite: T`. ONE transaction: the destination gains revision n+1
 * pointing at the source revision's blob (one more reference, no byte copied), its usage counted
 * as any revision's; with `consume` the source is deleted for good in the same transaction. Whatever is refused
 * (404, 403, 409, 507) is refused before anything is written. HTTP (routes/nodes.ts) and the
 * in-process client (local-client.ts) both call it.
 */
import { z } from 'zod';
import { assertMayActAsOwner, mayActAsOwner, resolveNode, resolveNodeAccess } from '../access.js';
import type { StoreContext } from '../context.js';
import { conflict, forbidden, invalid, notFound } from '../envelope.js';
import { publishedChecksums, type Checksums } from '../schemas/nodes.js';
import { subtreeBytes, topKindOf } from '../storage/nodes.js';
import { getRevision, insertNextRevision, listRevisions, type UploadResult } from '../storage/revisions.js';
import type { AuthenticatedUser } from '../sessions.js';
import { removeBlobFiles } from './blob-files.js';
import { assertUploadableUnder } from './files.js';
import { assertRoom, purge, writesOf } from './tree.js';

const reviseBodySchema = z.union([
  z.object({ from: z.string().min(1).max(200), consume: z.boolean().optional() }).strict(),
  z.object({ revision: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER) }).strict(),
]);

/** A kept revision as GET /api/nodes/{file}/revisions answers it. */
export interface RevisionRecord {
  revision: number;
  size: number;
  created: number;
  /** Who uploaded it (null: unknown, e.g. an upload through a link); the name while the account exists. */
  uploader_uuid: string | null;
  uploader_fullname: string | null;
  checksums?: Checksums | undefined;
}

/**
 * Every kept revision of a file, oldest first (retention may have removed older ones: the
 * numbers then start above 1). Access as for node details (`read`, access.ts): a file the caller
 * may not see is 404 like an unknown one; a folder is 409 `not_a_folder`. Through a share, the
 * current revision only (access.ts mayActAsOwner: old revisions are the owner's side).
 */
export async function listRevisionsOf(ctx: StoreContext, caller: AuthenticatedUser, id: string): Promise<RevisionRecord[]> {
  const { node: file, access } = await resolveNodeAccess(ctx.storage.sql, caller, id, 'read');
  if (file.type !== 'File') throw conflict('the node is not a file', 'not_a_folder');
  const kept = await listRevisions(ctx.storage.sql, file.uuid);
  const shown = mayActAsOwner(access, 'list-old-revisions') ? kept : kept.filter((r) => Number(r.revision) === file.revision);
  return shown.map((r) => ({
    revision: Number(r.revision),
    size: Number(r.size),
    created: Number(r.created),
    uploader_uuid: r.uploader_uuid,
    uploader_fullname: r.uploader_fullname,
    ...(r.sha1 !== null ? { checksums: publishedChecksums(r.sha1, r.md5) } : {}),
  }));
}

/**
 * Makes the latest revision of file `body.from` the next revision of file `id`. Needs `write` on
 * `id` (outside trash and the virtual folders: 403 `virtual_folder`), `read` and `download` on the
 * source, and `delete` on it with `consume`. Both must be files (409 `not_a_folder`) and
 * different nodes (400). The destination's owner must have room for the revision's bytes, less
 * what the consumed source frees that owner (507 `quota_exceeded`).
 *
 * With `consume` the source is deleted for good, with its own revisions: it is a client's temp
 * file (often two revisions: the empty file a LOCK or a 0-byte PUT made, then its content), whose
 * content lives on as the new revision; in the trash it would count toward the quota and fill the
 * trash with one temp file per save. A MOVE onto a file keeps the moved content, not the moved
 * file's own history (docs/store-semantics.md "Revision from another file").
 */
export async function reviseFrom(ctx: StoreContext, caller: AuthenticatedUser, id: string, body: unknown): Promise<UploadResult> {
  const parsed = reviseBodySchema.safeParse(body);
  if (!parsed.success) throw invalid('the body must be {"from": "<file uuid>", "consume": true|false} or {"revision": <number>}');
  if ('revision' in parsed.data) return restoreRevision(ctx, caller, id, parsed.data.revision);
  const { from, consume = false } = parsed.data;
  const now = ctx.clock.now();
  let unreferenced: string[] = [];
  const result = await ctx.storage.sql.transaction(async (tx) => {
    const destination = await resolveNode(tx, caller, id, 'write');
    if (destination.type !== 'File') throw conflict('the destination is not a file', 'not_a_folder');
    assertUploadableUnder(await topKindOf(tx, destination));
    const { node: source, access } = await resolveNodeAccess(tx, caller, from, 'read');
    for (const needed of consume ? (['download', 'delete'] as const) : (['download'] as const)) {
      if (!access.granted.includes(needed)) throw forbidden(`${needed} permission required on the source`);
    }
    if (source.type !== 'File') throw conflict('the source is not a file', 'not_a_folder');
    if (source.uuid === destination.uuid) throw invalid('the source and the destination are the same file');
    const revision = source.revision === null ? undefined : await getRevision(tx, source.uuid, source.revision);
    if (!revision) throw new Error(`file ${source.uuid} has no revision ${String(source.revision)}`);
    const sameOwner = source.owner_type === destination.owner_type && source.owner_uuid === destination.owner_uuid;
    // A consumed source frees the bytes of all its revisions (for its owner: the destination's when the same).
    const freed = consume && sameOwner ? await subtreeBytes(tx, source.uuid) : 0;
    await assertRoom(tx, destination, revision.size - freed);
    const recorded = await insertNextRevision(tx, destination, { hash: revision.blob_hash, sizeBytes: revision.size, now }, caller.userUuid);
    if (consume) unreferenced = await purge({ sql: tx, now, callerUuid: caller.userUuid }, source);
    return recorded;
  }, writesOf(caller.userUuid));
  // Blobs of the source's earlier revisions no other row refers to (its latest is the destination's now).
  await removeBlobFiles(ctx, unreferenced);
  ctx.log.debug({ node: result.uuid, revision: result.revision, from, consume }, 'revision made from another file');
  return result;
}

/**
 * A restore: kept revision `number` of file `id` becomes its next revision, pointing at the same
 * blob (one more reference, no byte copied; its size counts toward the owner's usage as any
 * revision's, 507 when there is no room). Needs `write` on the file, outside trash. Earlier
 * revisions stay; 404 for a revision that is not kept.
 */
export async function restoreRevision(ctx: StoreContext, caller: AuthenticatedUser, id: string, number: number): Promise<UploadResult> {
  const now = ctx.clock.now();
  const result = await ctx.storage.sql.transaction(async (tx) => {
    const { node: file, access } = await resolveNodeAccess(tx, caller, id, 'write');
    assertMayActAsOwner(access, 'restore-revision');
    if (file.type !== 'File') throw conflict('the node is not a file', 'not_a_folder');
    assertUploadableUnder(await topKindOf(tx, file));
    const kept = await getRevision(tx, file.uuid, number);
    if (!kept) throw notFound(`revision ${number} of this file is not kept`);
    await assertRoom(tx, file, Number(kept.size));
    return insertNextRevision(tx, file, { hash: kept.blob_hash, sizeBytes: Number(kept.size), now }, caller.userUuid);
  }, writesOf(caller.userUuid));
  ctx.log.debug({ node: result.uuid, revision: result.revision, restored: number }, 'revision restored');
  return result;
}
