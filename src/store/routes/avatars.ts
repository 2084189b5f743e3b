/**
 * GET|HEAD /avatars/{owner_uuid}/{version}: a user's or group's avatar (ops/avatars.ts), both
 * editions, no session (an <img> cannot send a bearer token). The version in the path is derived
 * from the bytes, so the answer may be cached for ever; a stale or unknown one is 404.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { StoreContext } from '../context.js';
import { notFound } from '../envelope.js';
import { avatarAt } from '../ops/avatars.js';

const params = z.object({ owner: z.string().min(1).max(64), version: z.string().min(1).max(64) });

export async function avatarRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  app.route({
    method: ['GET', 'HEAD'],
    url: '/avatars/:owner/:version',
    handler: async (request, reply) => {
      const parsed = params.safeParse(request.params);
      const avatar = parsed.success ? (await avatarAt(ctx.storage.sql, parsed.data.owner.toLowerCase(), parsed.data.version)) : undefined;
      if (!avatar) throw notFound('no such avatar');
      const etag = `"${avatar.version}"`;
      void reply
        .header('content-type', avatar.contentType)
        .header('etag', etag)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('x-content-type-options', 'nosniff')
        // An image is shown, never run: nothing it could embed may load anything.
        .header('content-security-policy', "default-src 'none'; sandbox");
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.send(request.method === 'HEAD' ? undefined : avatar.bytes);
    },
  });
}
