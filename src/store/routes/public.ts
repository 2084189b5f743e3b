/**
 * Public and upload links without a session (docs/extensions.md "Share links and private
 * shares", edition 3.0 only):
 *   GET|HEAD /public/{token}            a file: its bytes (Range, ETag, conditional headers);
 *                                       a folder: a JSON listing
 *   GET|HEAD /public/{token}/{path...}  a file or folder below a shared folder, by names
 *     ?info     what the link's page shows (ops/public-links.ts linkInfo), any kind of link
 *     ?preview  a file's bytes inline where content-security.ts allows it (the page's preview)
 *   GET|HEAD /public/{token}[/{path...}]?download=zip
 *                                       the node (a folder with all it holds) as a streamed
 *                                       zip (ops/zip.ts), behind the same password
 *   ...?thumbnail=<px>                  a file's thumbnail (routes/thumbnails.ts), after the same open()
 *   POST     /public/{token}/upload     an upload link: multipart, part `file`, a new file
 *   POST     /public/{token}/unlock     `{password}`: the unlock cookie of a password link (ops/link-unlock.ts)
 * A browser's navigation (a GET without query asking for HTML as a document) gets the web app's
 * page instead, which asks the above itself; a gone link's page carries its 404 or 410. Passwords
 * come as HTTP Basic (any username) or the unlock cookie; a 401 challenges with Basic only when
 * the request does not come from our own pages. Thin: ops/public-links.ts decides.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clientOf, requestOrigin } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { invalid, notFound, StoreHttpError, success } from '../envelope.js';
import { checkLinkPassword, commitLinkUpload, findLink, linkChildren, linkFileVersion, linkInfo, listLinkFolder, nodeInLink, openLink, uploadRoom, type OpenedLink } from '../ops/public-links.js';
import { isUnlocked, unlockCookieHeader, unlockCookieValue } from '../ops/link-unlock.js';
import { planZip, zipStream } from '../ops/zip.js';
import type { SendAppPage } from '../web-app.js';
import { receiveFilePart } from './receive-file.js';
import { commitStaged } from '../ops/upload.js';
import { sendFileVersion, sendZip } from './send-file.js';
import { sendThumbnail } from './thumbnails.js';

const TOKEN_RE = /^[A-Za-z0-9_-]{20,128}$/;

function tokenOf(request: FastifyRequest): string {
  const token = (request.params as { token?: unknown }).token;
  if (typeof token !== 'string' || !TOKEN_RE.test(token)) throw notFound('no such link');
  return token;
}

/** The request's query (fastify parses it; `?info` is `{info: ''}`). */
const queryOf = (request: FastifyRequest): Record<string, unknown> => (request.query ?? {}) as Record<string, unknown>;

/**
 * Whether the request comes from a page of ours (the link page's fetches and downloads): then a
 * 401 carries no Basic challenge, which would make the browser show its Basic box over the page.
 */
function fromOurPage(request: FastifyRequest): boolean {
  return request.headers['sec-fetch-site'] === 'same-origin' || queryOf(request).info !== undefined;
}

/** A browser opening the link: a GET without query, asking for HTML, as a document (or from a browser that does not say). */
function isNavigation(request: FastifyRequest): boolean {
  if (request.method !== 'GET' || request.url.includes('?')) return false;
  if (!/\btext\/html\b/i.test(String(request.headers.accept ?? ''))) return false;
  const dest = request.headers['sec-fetch-dest'];
  return dest === undefined || dest === 'document';
}

/** Opens the link of the request: the unlock cookie or HTTP Basic for a password (the zip route opens it here too). */
export function open(ctx: StoreContext, request: FastifyRequest): Promise<OpenedLink> {
  const proof = {
    authorization: request.headers.authorization,
    unlocked: (link: OpenedLink) => isUnlocked(ctx, link, request.headers.cookie),
    challenge: !fromOurPage(request),
  };
  return openLink(ctx, tokenOf(request), proof, clientOf(ctx, request).ip);
}

/** The password a POST /unlock carries. */
function passwordOf(body: unknown): string {
  const password = typeof body === 'object' && body !== null ? (body as { password?: unknown }).password : undefined;
  if (typeof password !== 'string' || password.length < 1 || password.length > 1024) throw invalid('password: password must be a string of 1 to 1024 characters');
  return password;
}

export async function publicRoutes(app: FastifyInstance, ctx: StoreContext, page: SendAppPage): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;

  /** The app's page for a browser opening a link: with the link's 404 or 410 when it is gone (nothing about its password). */
  const linkPage = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    try {
      await findLink(ctx, tokenOf(request));
    } catch (err) {
      if (err instanceof StoreHttpError && (err.statusCode === 404 || err.statusCode === 410)) return page(request, reply, err.statusCode);
      throw err;
    }
    return page(request, reply);
  };

  const read = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    if (isNavigation(request)) return linkPage(request, reply);
    const link = await open(ctx, request);
    const rest = (request.params as { '*'?: string })['*'] ?? '';
    const segments = rest.split('/').filter((segment) => segment !== '');
    const query = queryOf(request);
    if (query.info !== undefined) return reply.header('cache-control', 'no-store').send(success('link', await linkInfo(ctx, link, segments)));
    const node = await nodeInLink(ctx, link, segments);
    if (query.download === 'zip') {
      const items = await planZip([node], (folder) => linkChildren(ctx, folder));
      return sendZip(request, reply, node.name, () => zipStream(ctx, items, (file) => linkFileVersion(ctx, file)));
    }
    if (query.thumbnail !== undefined) {
      if (node.type === 'Dir') throw notFound('no thumbnail for a folder');
      return sendThumbnail(ctx, request, reply, await linkFileVersion(ctx, node), query.thumbnail, true);
    }
    if (node.type === 'Dir') return reply.header('cache-control', 'no-store').send(success('shared folder', await listLinkFolder(ctx, node)));
    return sendFileVersion(ctx, request, reply, await linkFileVersion(ctx, node), query.preview !== undefined ? 'view' : 'download');
  };
  app.route({ method: ['GET', 'HEAD'], url: '/public/:token', handler: read });
  app.route({ method: ['GET', 'HEAD'], url: '/public/:token/*', handler: read });

  app.post('/public/:token/upload', async (request) => {
    const link = await open(ctx, request);
    const { staged, name } = await receiveFilePart(ctx, request, await uploadRoom(ctx, link), true);
    const result = await commitStaged(ctx, staged, () => commitLinkUpload(ctx, link.share.uuid, name as string, staged));
    return success('file uploaded', { name: result.name, size: result.size });
  });

  // The link page's password: the same check and limiter as Basic; the answer a cookie for this link's path only.
  app.post('/public/:token/unlock', async (request, reply) => {
    const token = tokenOf(request);
    const password = passwordOf(request.body);
    const link = await checkLinkPassword(ctx, await findLink(ctx, token), password, clientOf(ctx, request).ip);
    if (link.share.password_hash === null) return success('this link has no password', { expires: null });
    const value = await unlockCookieValue(ctx, link);
    void reply.header('set-cookie', unlockCookieHeader(token, value, requestOrigin(ctx, request)?.startsWith('https:') === true));
    return success('link unlocked', { expires: Number(value.split('.')[2]) });
  });
}
