/**
 * View and download (SPEC "View and download", edition 3.0 only; docs/store-semantics.md):
 *   GET|HEAD /resources/auth/{view|download}/{file_access_key}/{file_uuid}/{version}/{filename}
 * The fileaccesskey in the path stands for the session (no Authorization header). Which bytes a
 * caller may read, and reading them, is ops/download.ts; this route adds what is HTTP's: the
 * conditional and range decision (common/http-conditional.ts) and the headers. A single range
 * at most; a large file is never read into memory.
 */
import contentDisposition from 'content-disposition';
import type { FastifyInstance } from 'fastify';
import { lookup as lookupMimeType } from 'mime-types';
import { z } from 'zod';
import { evaluateConditionalRequest } from '../../common/http-conditional.js';
import type { StoreContext } from '../context.js';
import { notFound, StoreHttpError, unauthenticated } from '../envelope.js';
import { fileVersion, openRevision } from '../ops/download.js';
import { refuseExpiredPassword } from '../ops/password-age.js';
import { authenticateFileAccessKey } from '../sessions.js';

const params = z.object({
  key: z.string().min(1).max(200),
  uuid: z.string().min(1).max(200),
  version: z.string(),
});

type Disposition = 'view' | 'download';

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

export async function resourceRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;
  const { db, clock } = ctx;

  const serve = (disposition: Disposition) =>
    app.route({
      method: ['GET', 'HEAD'],
      // `{filename}` is cosmetic (the node's real name goes into Content-Disposition), so any
      // tail is accepted, including an empty one or one with more segments.
      url: `/resources/auth/${disposition}/:key/:uuid/:version/*`,
      handler: async (request, reply) => {
        const parsed = params.safeParse(request.params);
        if (!parsed.success) throw notFound();
        const { key, uuid, version } = parsed.data;
        const caller = authenticateFileAccessKey(db, clock, key);
        if (!caller) throw unauthenticated('invalid, expired or revoked file access key');
        refuseExpiredPassword(ctx, caller);
        const file = fileVersion(ctx, caller, uuid, version);
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
      },
    });

  serve('view');
  serve('download');
}
