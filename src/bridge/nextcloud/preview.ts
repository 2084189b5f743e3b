/**
 * Nextcloud's preview endpoint on the bridge's address (docs/client-quirks.md "Previews"), as
 * its PreviewController answers it:
 *
 * - `GET /index.php/core/preview?fileId=<oc:fileid>&x=&y=&a=&forceIcon=&mode=&mimeFallback=`
 *   (the Android and iOS apps' thumbnails and full previews);
 * - `GET /index.php/core/preview.png?file=<path>&x=&y=&a=` by path, relative to the user's files
 *   as `/remote.php/dav/files/<user>/` shows them (the client's view: tree/client-view.ts);
 * - both also without `/index.php`, and HEAD.
 *
 * Authentication exactly as for DAV (Basic with a password or an app password, a store token as
 * Bearer; a refused login counts against the same limiter). Answers: 200 the store's thumbnail
 * (image/webp; the size nearest `x`/`y`: previews.ts previewSizeFor), 304 to If-None-Match, 400
 * no file named or a size of 0, 404 no such file for this caller (another user's, a group drive
 * one is not in: never a hint that it exists), a folder, or nothing to preview; 403 a file the
 * caller sees but may not download (Nextcloud's "not readable"). `a=0` (crop) and `mode` are
 * answered with the whole image within the size: the apps fill their cells themselves;
 * `mimeFallback` redirects to no icon (404: the apps draw their own).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../common/logger.js';
import { StoreError, type NodeId } from '../../store-client/contract.js';
import { davFailureOf, DavStatusError } from '../dav-errors.js';
import { decodeRequestPath, encodeSegment } from '../href.js';
import { previewSizeFor, type PreviewCandidate } from '../previews.js';
import type { BridgeServices } from '../request/context.js';
import { AuthenticationFailed, withClientView, type BridgeUser } from '../sessions.js';
import type { DavPath } from '../store-tree.js';

export type PreviewRoute = 'by-id' | 'by-path';

export interface PreviewDoorOptions {
  services: BridgeServices;
  /** The caller: undefined without credentials; rejects with AuthenticationFailed when they are refused (logged there). */
  authenticate(req: IncomingMessage): Promise<BridgeUser | undefined>;
  log: Logger;
}

/** Whether `req` is for this door (the drive's root holds no `index.php` or `core`: namespace.ts). */
export function previewRouteOf(req: IncomingMessage): PreviewRoute | undefined {
  const raw = req.url ?? '/';
  const queryAt = raw.indexOf('?');
  const pathname = queryAt === -1 ? raw : raw.slice(0, queryAt);
  const rest = pathname.startsWith('/index.php/') ? pathname.slice('/index.php'.length) : pathname;
  if (rest === '/core/preview') return 'by-id';
  if (rest === '/core/preview.png') return 'by-path';
  return undefined;
}

const COMMON_HEADERS = { 'X-Content-Type-Options': 'nosniff' };

/** Nextcloud's `int` parameters: absent is the default, anything not an integer is refused (PHP would read it as 0: 400). */
function intParam(query: URLSearchParams, name: string, fallback: number): number {
  const value = query.get(name);
  if (value === null || value === '') return fallback;
  return /^-?\d{1,9}$/.test(value) ? Number(value) : 0;
}

/** Answers a request previewRouteOf matched. Never rejects: every failure is an answer. */
export async function answerPreview(req: IncomingMessage, res: ServerResponse, route: PreviewRoute, options: PreviewDoorOptions): Promise<void> {
  req.resume();
  try {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new DavStatusError(405, 'preview: GET or HEAD', undefined, { Allow: 'GET, HEAD' });
    const user = await options.authenticate(req);
    if (!user) throw new AuthenticationFailed('bad-credentials');
    // Several instances: a file uploaded through another is seen here as DAV would see it.
    await options.services.changesSettled?.();
    const query = new URL(req.url ?? '/', 'http://bridge').searchParams;
    const px = previewSizeFor(intParam(query, 'x', 32), intParam(query, 'y', 32));
    if (px === undefined) throw new DavStatusError(400, 'x and y must be sizes (-1: the largest)');
    const file = route === 'by-id' ? await byFileId(options.services, user, query.get('fileId')) : await byPath(options.services, user, query.get('file'));
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const thumbnail = await options.services.previews.thumbnail(user, file.id, file, px, abort.signal).catch((err: unknown) => {
      // Seen (it resolved for this caller) but not to be downloaded: Nextcloud's "not readable".
      if (err instanceof StoreError && err.kind === 'forbidden') throw new DavStatusError(403, 'the file may not be downloaded');
      if (err instanceof StoreError && err.kind === 'not-found') return undefined;
      throw err;
    });
    if (!thumbnail) throw new DavStatusError(404, 'no preview for this file');
    const headers: Record<string, string> = { ...COMMON_HEADERS, 'Cache-Control': 'private, no-cache', 'Content-Security-Policy': "default-src 'none'" };
    if (thumbnail.etag) headers.ETag = thumbnail.etag;
    const match = req.headers['if-none-match'];
    if (thumbnail.etag && typeof match === 'string' && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === thumbnail.etag)) {
      res.writeHead(304, headers).end();
      return;
    }
    res.writeHead(200, { ...headers, 'Content-Type': thumbnail.contentType, 'Content-Length': String(thumbnail.body.length) });
    res.end(req.method === 'HEAD' ? undefined : thumbnail.body);
  } catch (err) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // The body is empty (Nextcloud's is `[]`, which no client reads).
    const { status, headers, reason } = davFailureOf(err);
    if (status >= 500 && !(err instanceof AuthenticationFailed)) options.log.warn({ status, cause: err instanceof Error ? err.message : String(err) }, reason);
    res.writeHead(status, { ...COMMON_HEADERS, 'Cache-Control': 'no-store', ...headers, 'Content-Length': '0' }).end();
  }
}

interface PreviewFile extends PreviewCandidate {
  id: NodeId;
}

/** `fileId`: the oc:fileid PROPFIND showed (file-ids.ts); a node this caller may not read is no node (404). */
async function byFileId(services: BridgeServices, user: BridgeUser, fileId: string | null): Promise<PreviewFile> {
  // Nextcloud's default -1, or no number at all: 400.
  if (fileId === null || !/^\d{1,18}$/.test(fileId)) throw new DavStatusError(400, 'fileId must be a file id');
  const details = await services.fileIds.detailsOf(user, fileId);
  if (!details || details.kind !== 'file') throw new DavStatusError(404, 'no such file');
  return { id: details.id, kind: details.kind, name: details.name };
}

/** `file`: a path below the user's files, as `/remote.php/dav/files/<user>/` shows them. */
async function byPath(services: BridgeServices, user: BridgeUser, file: string | null): Promise<PreviewFile> {
  if (file === null || file.replace(/\/+/g, '') === '') throw new DavStatusError(400, 'file must name a file');
  let path: DavPath;
  try {
    path = decodeRequestPath(`/${file.split('/').map(encodeSegment).join('/')}`).path as DavPath;
  } catch {
    throw new DavStatusError(404, 'no such file');
  }
  const resource = await services.tree.tryStat(withClientView(user), path);
  if (!resource || resource.kind !== 'node' || resource.entry.kind !== 'file') throw new DavStatusError(404, 'no such file');
  return { id: resource.entry.id, kind: 'file', name: resource.entry.name, sizeBytes: resource.entry.sizeBytes };
}
