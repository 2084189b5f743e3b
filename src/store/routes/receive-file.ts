/**
 * Receiving one uploaded file over HTTP (POST /upload/{token} and upload links): the multipart
 * part named `file` is staged (the quota enforced while streaming; a large body goes to an
 * fsynced temp file, never into memory); ops/upload.ts commitStaged then records it. What is
 * multipart's stays here: a part that breaks off, a body to stop reading, the errors they mean.
 */
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { BlobTooLargeError, type StagedBlob } from '../blobs/staging.js';
import type { StoreContext } from '../context.js';
import { invalid, quotaExceeded } from '../envelope.js';
import { assertValidName } from '../names.js';

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

export interface ReceivedFile {
  staged: StagedBlob;
  /** The part's file name, checked by the name rule; undefined when not asked for. */
  name: string | undefined;
}

/**
 * Streams the part named `file` into a staged blob of at most `limitBytes` (507 beyond it).
 * With `named`, the part's `filename` must satisfy the name rule (400 `invalid_name`);
 * `md5LaterBytes` as BlobBackend.stage() takes it.
 */
export async function receiveFilePart(ctx: StoreContext, request: FastifyRequest, limitBytes: number, named: boolean, md5LaterBytes?: number): Promise<ReceivedFile> {
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
  let name: string | undefined;
  if (named) {
    try {
      name = assertValidName(part.filename);
    } catch (err) {
      abandonBody(request);
      throw err;
    }
  }
  try {
    const staged = await ctx.blobs.stage(part.file, limitBytes, undefined, undefined, md5LaterBytes);
    if (partError !== undefined || part.file.truncated) {
      await ctx.blobs.discard(staged);
      throw partError ?? new Error('the part was truncated');
    }
    return { staged, name };
  } catch (err) {
    abandonBody(request);
    throw stagingError(request, err);
  }
}
