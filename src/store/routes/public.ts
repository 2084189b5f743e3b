/**
 * Public and upload links without a session (docs/extensions.md "Share links and private
 * shares", edition 3.0 only):
 *   GET|HEAD /public/{token}            a file: its bytes (Range, ETag, conditional headers);
 *                                       a folder: a JSON listing
 *   GET|HEAD /public/{token}/{path...}  a file or folder below a shared folder, by names
 *   ...?thumbnail=<px>                  a file's thumbnail (routes/thumbnails.ts), after the same open()
 *   POST     /public/{token}/upload     an upload link: multipart, part `file`, a new file
 * Passwords come as HTTP Basic (any username). Thin: ops/public-links.ts decides.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clientOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { notFound, success } from '../envelope.js';
import { commitLinkUpload, linkFileVersion, listLinkFolder, nodeInLink, openLink, uploadRoom, type OpenedLink } from '../ops/public-links.js';
import { receiveFilePart } from './receive-file.js';
import { commitStaged } from '../ops/upload.js';
import { sendFileVersion } from './send-file.js';
import { sendThumbnail } from './thumbnails.js';

const TOKEN_RE = /^[A-Za-z0-9_-]{20,128}$/;

function open(ctx: StoreContext, request: FastifyRequest): Promise<OpenedLink> {
  const token = (request.params as { token?: unknown }).token;
  if (typeof token !== 'string' || !TOKEN_RE.test(token)) throw notFound('no such link');
  return openLink(ctx, token, request.headers.authorization, clientOf(ctx, request).ip);
}

export async function publicRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;

  const read = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const link = await open(ctx, request);
    const rest = (request.params as { '*'?: string })['*'] ?? '';
    const node = await nodeInLink(ctx, link, rest.split('/').filter((segment) => segment !== ''));
    const thumbnail = (request.query as { thumbnail?: unknown }).thumbnail;
    if (thumbnail !== undefined) {
      if (node.type === 'Dir') throw notFound('no thumbnail for a folder');
      return sendThumbnail(ctx, request, reply, await linkFileVersion(ctx, node), thumbnail, true);
    }
    if (node.type === 'Dir') return reply.header('cache-control', 'no-store').send(success('shared folder', await listLinkFolder(ctx, node)));
    return sendFileVersion(ctx, request, reply, await linkFileVersion(ctx, node), 'download');
  };
  app.route({ method: ['GET', 'HEAD'], url: '/public/:token', handler: read });
  app.route({ method: ['GET', 'HEAD'], url: '/public/:token/*', handler: read });

  app.post('/public/:token/upload', async (request) => {
    const link = await open(ctx, request);
    const { staged, name } = await receiveFilePart(ctx, request, await uploadRoom(ctx, link), true);
    const result = await commitStaged(ctx, staged, () => commitLinkUpload(ctx, link.share.uuid, name as string, staged));
    return success('file uploaded', { name: result.name, size: result.size });
  });
}
