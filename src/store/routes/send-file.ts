/**
 * Sends one revision of a file over HTTP (view/download and public links): conditional headers
 * and a single byte range (common/http-conditional.ts), then the bytes from ops/download.ts,
 * never read into memory. The blob is opened before any header is set, so a missing blob is a
 * clean 500 rather than a cut response.
 */
import contentDisposition from 'content-disposition';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { lookup as lookupMimeType } from 'mime-types';
import { evaluateConditionalRequest } from '../../common/http-conditional.js';
import type { StoreContext } from '../context.js';
import { StoreHttpError } from '../envelope.js';
import { openRevision, type FileVersion } from '../ops/download.js';

export type Disposition = 'view' | 'download';

/**
 * RFC 6266 Content-Disposition: the real name in `filename*` (UTF-8), and a plain-ASCII
 * `filename` for old clients. The package's default fallback keeps ISO-8859-1 letters, which
 * Node re-encodes and then rejects as invalid header characters on bodiless answers (HEAD).
 */
function dispositionHeader(name: string, disposition: Disposition): string {
  return contentDisposition(name, {
    type: disposition === 'view' ? 'inline' : 'attachment',
    fallback: name.replace(/[^\x20-\x7e]/g, '_'),
  });
}

export async function sendFileVersion(ctx: StoreContext, request: FastifyRequest, reply: FastifyReply, file: FileVersion, disposition: Disposition): Promise<FastifyReply> {
  const { node, revision } = file;
  const decision = evaluateConditionalRequest(request.method, request.headers, {
    etag: file.etag,
    lastModifiedMs: revision.created,
    sizeBytes: revision.size,
  });
  if (decision.status === 412) throw new StoreHttpError(412, 'precondition_failed', 'precondition failed');
  if (decision.status === 416) {
    throw new StoreHttpError(416, 'range_not_satisfiable', 'requested range not satisfiable', decision.headers);
  }
  if (decision.status === 304) return reply.code(304).headers({ ...decision.headers, 'cache-control': 'private' }).send();

  const body = request.method === 'GET' ? await openRevision(ctx, file, decision.status === 206 ? decision.range : undefined) : undefined;
  void reply
    .code(decision.status)
    .headers(decision.headers)
    .header('cache-control', 'private')
    .header('content-type', lookupMimeType(node.name) || 'application/octet-stream')
    .header('content-disposition', dispositionHeader(node.name, disposition))
    // A viewed file is shown as what its name says, never sniffed into HTML.
    .header('x-content-type-options', 'nosniff');
  return body ? reply.send(body) : reply.send();
}
