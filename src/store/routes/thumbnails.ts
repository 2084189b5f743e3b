/**
 * Thumbnails (docs/api.md "Thumbnails", edition 3.0 only):
 *   GET|HEAD /resources/auth/thumbnail/{file_access_key}/{file_uuid}/{version}/{px}
 * px 64, 256 or 1024; version a revision number or 999999999999999 (the latest). Readable exactly
 * as the file's download is (ops/download.ts fileVersion); what may be decoded, and the cache, are
 * ops/thumbnails.ts's. Links ask through routes/public.ts (`?thumbnail=<px>`) with sendThumbnail().
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { StoreContext } from '../context.js';
import { notFound, unauthenticated } from '../envelope.js';
import { fileVersion, LATEST_VERSION, type FileVersion } from '../ops/download.js';
import { makeThumbnail, thumbnailPx } from '../ops/thumbnails.js';
import { admitCaller, requirePolicy } from '../policy.js';
import { authenticateFileAccessKey } from '../sessions.js';

const params = z.object({
  key: z.string().min(1).max(200),
  uuid: z.string().min(1).max(200),
  version: z.string(),
  px: z.string(),
});

/**
 * Answers the thumbnail of `file` at `pxValue` (400 for another size, 404 when none can be made).
 * Private to the browser that asked; one named by its revision may be kept a day, the latest is
 * checked again each time (its ETag changes with the revision).
 */
export async function sendThumbnail(ctx: StoreContext, request: FastifyRequest, reply: FastifyReply, file: FileVersion, pxValue: unknown, isLatest: boolean): Promise<FastifyReply> {
  const px = thumbnailPx(pxValue);
  const thumbnail = await makeThumbnail(ctx, file, px);
  void reply
    .header('etag', thumbnail.etag)
    .header('cache-control', isLatest ? 'private, no-cache' : 'private, max-age=86400')
    .header('x-content-type-options', 'nosniff');
  const match = request.headers['if-none-match'];
  if (typeof match === 'string' && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === thumbnail.etag)) return reply.code(304).send();
  void reply.type('image/webp').header('content-length', String(thumbnail.body.length));
  return request.method === 'HEAD' ? reply.send() : reply.send(thumbnail.body);
}

export async function thumbnailRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;
  const { storage: { sql }, clock } = ctx;
  app.route({
    method: ['GET', 'HEAD'],
    url: '/resources/auth/thumbnail/:key/:uuid/:version/:px',
    handler: async (request, reply) => {
      const parsed = params.safeParse(request.params);
      if (!parsed.success) throw notFound();
      const { key, uuid, version, px } = parsed.data;
      const caller = await authenticateFileAccessKey(sql, clock, key);
      if (!caller) throw unauthenticated('invalid, expired or revoked file access key');
      admitCaller(ctx, caller, requirePolicy(request.method, request.routeOptions.url));
      thumbnailPx(px);
      return sendThumbnail(ctx, request, reply, await fileVersion(ctx, caller, uuid, version), px, version === LATEST_VERSION);
    },
  });
}
