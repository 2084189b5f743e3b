/**
 * The two-step upload (SPEC "Upload", docs/store-semantics.md "Upload"), both editions:
 *   GET  /api/nodes/{node_uuid}/upload  -> {token, status, msg}
 *   POST /upload/{upload_token}         multipart, field `file`, no Authorization
 * Order of step 2: check and consume the token, check the target, then ops/upload.ts storeFile
 * with the multipart part's stream (quota enforced while streaming; a large body is never held
 * in memory). Thin otherwise: what is multipart-specific (a part that breaks off, a body to stop
 * reading) stays here.
 */
import multipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { callerOf } from '../app.js';
import { BlobTooLargeError } from '../blobs/blob-store.js';
import type { StoreContext } from '../context.js';
import { consumeUploadToken, uploaderOf } from '../db/files.js';
import { invalid, quotaExceeded, StoreHttpError, success } from '../envelope.js';
import { issueUploadToken, storeFile, uploadName, uploadTarget } from '../ops/upload.js';

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
  const { db, clock, config } = ctx;

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
    const { token, kind } = issueUploadToken(ctx, callerOf(request), params.data.id);
    return { token, status: 'success', msg: kind === 'file' ? 'upload token for a new file' : 'upload token for a new revision' };
  });

  app.post('/upload/:token', async (request, reply) => {
    const params = tokenParams.safeParse(request.params);
    // A token that cannot have been issued is unknown, like any other unknown token.
    const grant = consumeUploadToken(db, params.success ? params.data.token : '', clock.now(), config.store.uploadTokenTtlMs);
    const uploader = uploaderOf(db, grant, clock.now());
    // Target checks before the body is parsed: a refusal costs no read of the file.
    const target = uploadTarget(ctx, uploader, grant.targetUuid);
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
    // staging listens; remember it so a truncated part is never stored as complete.
    let partError: unknown;
    part.file.on('error', (err) => {
      partError ??= err;
    });
    const file = part;
    let name: string;
    try {
      name = uploadName(target, file.filename);
    } catch (err) {
      abandonBody(request);
      throw err;
    }
    let result;
    try {
      result = await storeFile(ctx, uploader, target, name, file.file, {
        verify: () => (partError !== undefined || file.file.truncated ? (partError ?? new Error('the part was truncated')) : undefined),
      });
    } catch (err) {
      abandonBody(request);
      throw err instanceof StoreHttpError ? err : stagingError(request, err);
    }
    return reply.code(200).send(success(result.revision === 1 ? 'file uploaded' : 'revision uploaded', result));
  });
}
