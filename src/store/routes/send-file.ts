/**
 * Sends one revision of a file over HTTP (view/download and public links): conditional headers
 * and a single byte range (common/http-conditional.ts), then the bytes from ops/download.ts,
 * never read into memory. The blob is opened before any header is set, so a missing blob is a
 * clean 500 rather than a cut response. What a browser may do with the bytes is
 * common/content-security.ts's rule, shared with the bridge's GET.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { userContentHeaders } from '../../common/content-security.js';
import { evaluateConditionalRequest } from '../../common/http-conditional.js';
import type { StoreContext } from '../context.js';
import { StoreHttpError } from '../envelope.js';
import type { Readable } from 'node:stream';
import { openRevision, type FileVersion } from '../ops/download.js';

export type Disposition = 'view' | 'download';

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
    // Type from the name, nosniff, the sandbox; only passive types inline (docs/content-security.md).
    .headers(userContentHeaders(node.name, disposition === 'view' ? 'inline' : 'attachment'));
  return body ? reply.send(body) : reply.send();
}

/**
 * Answers a zip archive (ops/zip.ts) as an attachment named `name` (`.zip` added when missing),
 * never cached; a HEAD gets the headers only (the archive is not made).
 */
export function sendZip(request: FastifyRequest, reply: FastifyReply, name: string, archive: () => Readable): FastifyReply {
  const base = name.replace(/\.zip$/i, '').trim() || 'download';
  void reply.code(200).header('cache-control', 'no-store').headers(userContentHeaders(`${base}.zip`, 'attachment'));
  return request.method === 'HEAD' ? reply.send() : reply.send(archive());
}
