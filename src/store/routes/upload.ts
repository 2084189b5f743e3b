/**
 * The two-step upload (SPEC "Upload", docs/store-semantics.md "Upload"), both editions:
 *   GET  /api/nodes/{node_uuid}/upload  -> {token, status, msg}
 *   POST /upload/{upload_token}         multipart, field `file`, no Authorization
 * Order of step 2: check and consume the token, stream the part into a temp file (quota
 * enforced while streaming), fsync, rename to the content address, then one metadata
 * transaction; any failure discards the temp file and any blob no row refers to. The body
 * is never buffered in memory.
 */
import multipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { callerOf } from '../app.js';
import { resolveNode } from '../access.js';
import { BlobTooLargeError, type StagedBlob } from '../blobs/blob-store.js';
import type { StoreContext } from '../context.js';
import { remainingBytes } from '../db/blobs.js';
import { assertUploadTarget, commitUpload, consumeUploadToken, createUploadToken, uploaderOf, type UploadResult } from '../db/files.js';
import { invalid, quotaExceeded, success } from '../envelope.js';
import { assertValidName } from '../names.js';

const nodeParams = z.object({ id: z.string().min(1).max(200) });
const tokenParams = z.object({ token: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/) });

/**
 * Stops reading the rest of a request body we will not use, so the early answer can go out
 * and the connection stays usable: the parser is detached and the bytes still arriving are
 * discarded (what Node does by itself for a body nobody read).
 */
function abandonBody(request: FastifyRequest): void {
  request.raw.unpipe();
  request.raw.resume();
}

/** What a failed stage() means for the client. */
function stagingError(request: FastifyRequest, err: unknown): unknown {
  if (err instanceof BlobTooLargeError) return quotaExceeded();
  // A file system failure (disk full, permissions) is ours: a 500, logged.
  if (typeof (err as { syscall?: unknown }).syscall === 'string' && !request.raw.destroyed) return err;
  // Otherwise the body broke off: the client hung up, or the multipart framing ended early.
  return invalid('the upload body ended early or is malformed');
}

export async function uploadRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  const { db, blobs, clock, config, log } = ctx;

  // Stream mode only: nothing is buffered or written to the OS temp folder by the plugin.
  // preservePath keeps the name as sent, so "a/b" is refused by the name rule rather than
  // silently shortened to "b".
  await app.register(multipart, {
    preservePath: true,
    throwFileSizeLimit: false,
    limits: { fileSize: Number.POSITIVE_INFINITY, files: 1, fields: 20, fieldSize: 64 * 1024, parts: 25 },
  });

  app.get('/api/nodes/:id/upload', async (request) => {
    const params = nodeParams.safeParse(request.params);
    if (!params.success) throw invalid('invalid node identifier');
    const caller = callerOf(request);
    const target = resolveNode(db, caller, params.data.id, 'write');
    const token = createUploadToken(db, clock.now(), caller, target);
    return { token, status: 'success', msg: target.type === 'Dir' ? 'upload token for a new file' : 'upload token for a new revision' };
  });

  app.post('/upload/:token', async (request, reply) => {
    const params = tokenParams.safeParse(request.params);
    // A token that cannot have been issued is unknown, like any other unknown token.
    const grant = consumeUploadToken(db, params.success ? params.data.token : '', clock.now(), config.store.uploadTokenTtlMs);
    const uploader = uploaderOf(db, grant, clock.now());
    const target = resolveNode(db, uploader, grant.targetUuid, 'write');
    assertUploadTarget(db, target);
    if (!request.isMultipart()) throw invalid('the upload must be multipart/form-data with a part named "file"');

    let part: MultipartFile | undefined;
    try {
      part = await request.file();
    } catch (err) {
      abandonBody(request);
      throw stagingError(request, err);
    }
    if (!part) throw invalid('the upload has no part named "file"');
    if (part.fieldname !== 'file') {
      abandonBody(request);
      throw invalid('the upload has no part named "file"');
    }
    // The parser reports a body that breaks off as an error on the part, possibly before
    // stage() listens; remember it so a truncated part is never stored as complete.
    let partError: unknown;
    part.file.on('error', (err) => {
      partError ??= err;
    });
    let name = target.name;
    if (target.type === 'Dir') {
      try {
        name = assertValidName(part.filename);
      } catch (err) {
        abandonBody(request);
        throw err;
      }
    }

    const limit = remainingBytes(db, target.owner_type, target.owner_uuid);
    let staged: StagedBlob;
    try {
      staged = await blobs.stage(part.file, limit);
      if (partError !== undefined || part.file.truncated) {
        await blobs.discard(staged);
        throw partError ?? new Error('the part was truncated');
      }
    } catch (err) {
      abandonBody(request);
      throw stagingError(request, err);
    }

    try {
      await blobs.commit(staged);
    } catch (err) {
      await blobs.discard(staged);
      blobs.release(staged.hash);
      await blobs.remove(staged.hash);
      throw err;
    }
    let result: UploadResult;
    try {
      result = commitUpload(db, {
        uploader,
        targetUuid: target.uuid,
        name,
        hash: staged.hash,
        sizeBytes: staged.sizeBytes,
        now: clock.now(),
      });
    } catch (err) {
      // The rename happened, the row did not: unlink unless another row shares the bytes.
      blobs.release(staged.hash);
      await blobs.remove(staged.hash);
      throw err;
    }
    blobs.release(staged.hash);
    log.debug({ node: result.uuid, revision: result.revision, sizeBytes: result.size }, 'upload stored');
    return reply.code(200).send(success(result.revision === 1 ? 'file uploaded' : 'revision uploaded', result));
  });
}
