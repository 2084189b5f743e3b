/**
 * View and download (SPEC "View and download", edition 3.0 only; docs/store-semantics.md):
 *   GET|HEAD /resources/auth/{view|download}/{file_access_key}/{file_uuid}/{version}/{filename}
 * The fileaccesskey in the path stands for the session (no Authorization header). Bytes are
 * streamed from the blob store, a single range at most; the whole file is never read into
 * memory. Conditional and range logic lives in common/http-conditional.ts.
 */
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import contentDisposition from 'content-disposition';
import type { FastifyInstance } from 'fastify';
import { lookup as lookupMimeType } from 'mime-types';
import { z } from 'zod';
import { evaluateConditionalRequest } from '../../common/http-conditional.js';
import { resolveNode } from '../access.js';
import type { StoreContext } from '../context.js';
import { getRevision } from '../db/files.js';
import { invalid, notFound, StoreHttpError, unauthenticated } from '../envelope.js';
import { refuseExpiredPassword } from '../ops/password-age.js';
import { authenticateFileAccessKey } from '../sessions.js';

/** SPEC's "latest version" selector. */
export const LATEST_VERSION = '999999999999999';

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
  const { db, blobs, clock, log } = ctx;

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
        if (!/^\d{1,20}$/.test(version)) throw invalid(`version must be a revision number or ${LATEST_VERSION}`);

        const node = resolveNode(db, caller, uuid, 'download');
        // A folder has no bytes; answering as for an unknown id keeps the two indistinguishable.
        if (node.type !== 'File' || node.revision === null) throw notFound();
        const wanted = version === LATEST_VERSION ? node.revision : Number(version);
        const revision = Number.isSafeInteger(wanted) ? getRevision(db, node.uuid, wanted) : undefined;
        if (!revision) throw notFound('no such revision');

        const decision = evaluateConditionalRequest(request.method, request.headers, {
          etag: `"${node.uuid}-${revision.revision}"`,
          lastModifiedMs: revision.created,
          sizeBytes: revision.size,
        });
        if (decision.status === 412) throw new StoreHttpError(412, 'precondition_failed', 'precondition failed');
        if (decision.status === 416) {
          throw new StoreHttpError(416, 'range_not_satisfiable', 'requested range not satisfiable', decision.headers);
        }
        if (decision.status === 304) return reply.code(304).headers({ ...decision.headers, 'cache-control': 'private' }).send();

        let body: Readable | undefined;
        if (request.method === 'GET') {
          body = blobs.open(revision.blob_hash, decision.status === 206 ? decision.range : undefined);
          try {
            // Open before any header is set, so a missing blob is a clean 500, not a cut response.
            await once(body, 'ready');
          } catch (err) {
            body.destroy();
            log.error({ err, node: node.uuid, revision: revision.revision }, 'blob of a revision cannot be opened');
            throw err;
          }
        }
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
