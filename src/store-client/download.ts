/**
 * View and download (edition 3.0): GET /resources/auth/{view|download}/{fileaccesskey}/{uuid}/
 * {version}/{filename}, streamed. A Range is handed to the server; when it answers 200 instead
 * of 206 the result says `rangeHonoured: false` and the caller skips bytes itself.
 */
import { NO_FILE_ACCESS_KEY, StoreError } from './errors.js';
import type { StoreHttp } from './http.js';
import { seg } from './parse.js';
import type { ByteRange, Download, NodeId, StoreSession, Thumbnail, ThumbnailSize } from './types.js';

export const LATEST_VERSION = '999999999999999';

export interface DownloadOptions {
  range?: ByteRange;
  /** A revision number; latest when absent. */
  version?: number | string;
  mode?: 'download' | 'view';
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

export function downloadPath(s: StoreSession, file: NodeId, name: string, version: number | string = LATEST_VERSION, mode: 'download' | 'view' = 'download'): string {
  return `/resources/auth/${mode}/${seg(s.fileAccessKey)}/${seg(file)}/${seg(String(version))}/${encodeURIComponent(name || 'file')}`;
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export async function download(http: StoreHttp, s: StoreSession, file: NodeId, name: string, options: DownloadOptions = {}): Promise<Download> {
  const operation = 'resources.download';
  // A session the bridge took from a bearer token (bridge/token-sessions.ts) has no file access
  // key: the interface answers it only at login, and downloads need it in the URL.
  if (s.fileAccessKey === '') throw new StoreError('forbidden', operation, undefined, 'downloads need the file access key of a login; a session token alone does not carry one');
  const headers: Record<string, string> = { ...options.headers };
  const { range } = options;
  if (range) headers.range = `bytes=${range.start}-${range.end ?? ''}`;
  const res = await http.stream(
    { method: 'GET', path: downloadPath(s, file, name, options.version, options.mode), headers, signal: options.signal },
    operation,
    (status) => status === 200 || status === 206,
  );
  const lengthHeader = header(res.headers, 'content-length');
  const contentLength = lengthHeader !== undefined && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
  const result: Download = {
    body: res.body,
    status: res.status,
    contentLength,
    rangeHonoured: false,
    etag: header(res.headers, 'etag'),
    lastModified: header(res.headers, 'last-modified'),
    contentType: header(res.headers, 'content-type'),
  };
  if (res.status === 206) {
    const match = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(header(res.headers, 'content-range') ?? '');
    if (!match || !range || Number(match[1]) !== range.start) {
      res.body.destroy();
      throw new StoreError('bad-response', operation, 206, 'Content-Range does not match the requested range');
    }
    result.rangeHonoured = true;
    result.totalBytes = match[3] === '*' ? undefined : Number(match[3]);
  } else {
    result.totalBytes = contentLength;
  }
  return result;
}

/** More than any thumbnail at 1,024 px: a store sending more is not answering a thumbnail. */
const MAX_THUMBNAIL_BYTES = 8 * 1024 * 1024;

/**
 * GET /resources/auth/thumbnail/{fileaccesskey}/{uuid}/{latest}/{px} (driveway's extension,
 * docs/extensions.md "Thumbnails for the bridge"): read whole. A store without the route answers
 * 404, which is not-found as for a file it makes no thumbnail of.
 */
export async function thumbnail(http: StoreHttp, s: StoreSession, file: NodeId, px: ThumbnailSize, signal?: AbortSignal): Promise<Thumbnail> {
  const operation = 'resources.thumbnail';
  if (s.fileAccessKey === '') throw new StoreError('not-found', operation, undefined, 'thumbnails need the file access key of a login; a session token alone does not carry one', { code: NO_FILE_ACCESS_KEY });
  const path = `/resources/auth/thumbnail/${seg(s.fileAccessKey)}/${seg(file)}/${LATEST_VERSION}/${px}`;
  const res = await http.stream({ method: 'GET', path, signal }, operation, (status) => status === 200);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > MAX_THUMBNAIL_BYTES) {
      res.body.destroy();
      throw new StoreError('bad-response', operation, 200, 'thumbnail larger than any thumbnail');
    }
    chunks.push(chunk);
  }
  const contentType = header(res.headers, 'content-type') ?? '';
  if (!/^image\/(webp|png|jpeg)\b/i.test(contentType)) throw new StoreError('bad-response', operation, 200, `thumbnail of type ${contentType || '(none)'}`);
  return { body: Buffer.concat(chunks, total), etag: header(res.headers, 'etag'), contentType: contentType.split(';')[0]?.trim().toLowerCase() ?? 'image/webp' };
}
