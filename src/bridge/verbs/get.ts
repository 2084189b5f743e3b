/**
 * GET and HEAD (RFC 9110 §9.3.1, §9.3.2, §13, §14): a file's bytes streamed from the store, one
 * byte range at most, with ETag / Last-Modified / 304 / 412 / 416 decided by
 * common/http-conditional.ts (the store's download shares it). Fixes over webdav-server 2.6.3
 * (docs/client-quirks.md §0): ETag and Last-Modified are sent, Content-Range carries the total size, a
 * range past the end is 416, and the range is handed to the store instead of reading from byte 0
 * (so bytes read from the store ≈ bytes sent; store-tree skips bytes only when a store ignores
 * Range). HEAD answers the same headers without asking the store for any bytes.
 *
 * Never buffers a file: the store body is piped into the response with backpressure, and the
 * store call is aborted when the client goes away (ctx.signal). Once headers are out, a failure
 * cuts the connection (respond.ts), so a short body never looks like a complete answer.
 *
 * Choices:
 * - A collection answers 200 with an HTML index page of its entries (index-page.ts; what Apache
 *   with mod_autoindex, nginx with autoindex and `rclone serve webdav` do), so a person who opens
 *   their WebDrive URL in a browser can browse and download. DAV clients never GET a collection.
 * - Every file goes out with nosniff and a sandbox, and any type a browser could run (HTML,
 *   SVG, XML, scripts, PDF, unknown) as an attachment: opened from the bridge's origin it could
 *   act with the viewer's credentials. The rule is common/content-security.ts's, the store's too.
 * - Last-Modified is the client's mtime when one was kept (X-OC-Mtime, Win32LastModifiedTime,
 *   SAR:lastmodified), else the store's `updated`, as getlastmodified in PROPFIND.
 * - `OC-Checksum: SHA1:<hex>` when the store published the file's checksums (docs/extensions.md).
 * - A store without a download endpoint (edition 1.0 of the interface) cannot serve bytes at
 *   all: 501 Not Implemented, the honest answer for "this server cannot do GET here". A 404 would
 *   make clients believe the file is gone while PROPFIND lists it.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { evaluateConditionalRequest, type ConditionalDecision } from '../../common/http-conditional.js';
import { StoreError, type Download } from '../../store-client/contract.js';
import { DavStatusError } from '../dav-errors.js';
import { contentTypeOf, userContentHeaders } from '../../common/content-security.js';
import type { BridgeUser } from '../sessions.js';
import type { Resource } from '../store-tree.js';
import type { DavContext, VerbHandler } from '../request/context.js';
import { FAVICON_PATH, sendFavicon } from './favicon.js';
import { sendIndexPage } from './index-page.js';
import { etagOf, requirePrivilege, STORE_GUARDS } from '../request/preconditions.js';

/** Content-Type from the name alone: content is never sniffed (rclone#8759: no reads for metadata). */
export { contentTypeOf };

/** The modification time clients see: a kept client mtime, else the store's `updated`. */
export async function lastModifiedOf(ctx: DavContext, resource: Resource): Promise<number> {
  const key = resource.chain[resource.chain.length - 1];
  return (key === undefined ? undefined : await ctx.services.props.getMtime(key)) ?? resource.entry.updatedMs;
}

export const get: VerbHandler = async (ctx) => {
  if (ctx.path === FAVICON_PATH) {
    sendFavicon(ctx.res, ctx.method);
    return;
  }
  const user = ctx.user();
  const { tree } = ctx.services;
  // One more look when the cached listing turned out to describe another revision than the
  // store now serves (someone wrote behind this bridge): headers must match the bytes.
  for (let attempt = 0; ; attempt += 1) {
    const resource = await tree.stat(user, ctx.path);
    if (resource.entry.kind === 'folder') {
      await sendIndexPage(ctx, user, resource);
      return;
    }
    // HEAD too: it is a GET without the body, and says as much about the bytes.
    await requirePrivilege(ctx, resource, 'download', STORE_GUARDS);
    const outcome = await serveFile(ctx, user, resource);
    if (outcome === 'served') return;
    if (attempt > 0) throw new StoreError('bad-response', 'bridge.get', undefined, 'the store serves another size than it lists');
  }
};

type Outcome = 'served' | 'stale';

async function serveFile(ctx: DavContext, user: BridgeUser, resource: Resource): Promise<Outcome> {
  const { res } = ctx;
  const { entry } = resource;
  const decision = evaluateConditionalRequest(ctx.method, ctx.req.headers, {
    etag: etagOf(resource),
    lastModifiedMs: await lastModifiedOf(ctx, resource),
    sizeBytes: entry.sizeBytes,
  });
  const headers: Record<string, string> = { ...decision.headers };
  if (decision.status === 200 || decision.status === 206) {
    Object.assign(headers, userContentHeaders(entry.name, wantsDownload(ctx) ? 'attachment' : 'inline'));
    // The whole file's SHA-1, as ownCloud sends it (a range too: it names the representation).
    if (entry.checksums) headers['OC-Checksum'] = `SHA1:${entry.checksums.sha1}`;
  }
  if (decision.status !== 200 && decision.status !== 206) {
    // A 304 may only carry the Content-Length a 200 would have (RFC 9110 §8.6): send none.
    res.writeHead(decision.status, decision.status === 304 ? headers : { ...headers, 'content-length': '0' });
    res.end();
    return 'served';
  }
  if (ctx.method === 'HEAD' || entry.sizeBytes === 0) {
    res.writeHead(decision.status, headers);
    res.end();
    return 'served';
  }

  const range = decision.status === 206 ? decision.range : undefined;
  let download: Download;
  try {
    download = await ctx.services.tree.read(user, resource, range, ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) {
      ctx.log.debug({ err }, 'client went away before the download started');
      return 'served';
    }
    return readFailure(ctx, user, resource, err);
  }
  if (!describesEntry(download, decision, entry.sizeBytes)) {
    // undici's body reports its own destruction as an error: without a listener that would be
    // an uncaught exception.
    download.body.on('error', () => undefined).destroy();
    forgetParent(ctx, resource);
    return 'stale';
  }

  const expected = decision.status === 206 ? decision.range.end - decision.range.start + 1 : entry.sizeBytes;
  res.writeHead(decision.status, headers);
  try {
    if (download.sendTo) {
      // The in-process store writes with reused buffers and checks the length itself.
      await download.sendTo(res, ctx.signal);
      res.end();
    } else {
      await pipeline(download.body, exactLength(expected), res);
    }
  } catch (err) {
    // The client hanging up is not a failure of ours: nothing to answer, nothing to log loudly.
    if (ctx.signal.aborted) {
      ctx.log.debug({ err }, 'client went away during the download');
      return 'served';
    }
    throw err;
  }
  return 'served';
}

/** `?download` (the index page's link) asks for an attachment whatever the type. */
function wantsDownload(ctx: DavContext): boolean {
  const query = (ctx.req.url ?? '').split('?')[1];
  return query !== undefined && new URLSearchParams(query).has('download');
}

/** Whether the store's answer is about the revision the headers describe (same total size). */
function describesEntry(download: Download, decision: ConditionalDecision, sizeBytes: number): boolean {
  if (download.totalBytes !== undefined && download.totalBytes !== sizeBytes) return false;
  if (decision.status === 206 && download.contentLength !== undefined) {
    return download.contentLength === decision.range.end - decision.range.start + 1;
  }
  return true;
}

/**
 * A download refused with not-found: the file was deleted or replaced behind the bridge (look
 * again), or the store has no download endpoint at all (edition 1.0: 501).
 */
async function readFailure(ctx: DavContext, user: BridgeUser, resource: Resource, err: unknown): Promise<Outcome> {
  if (!(err instanceof StoreError)) throw err;
  if (err.kind === 'range-not-satisfiable') {
    forgetParent(ctx, resource);
    return 'stale';
  }
  if (err.kind !== 'not-found') throw err;
  if (err.code === 'not_implemented') throw noDownloadEndpoint();
  forgetParent(ctx, resource);
  const again = await ctx.services.tree.tryStat(user, resource.path);
  if (!again) throw err;
  if (again.entry.id === resource.entry.id && again.entry.revision === resource.entry.revision) throw noDownloadEndpoint();
  return 'stale';
}

function noDownloadEndpoint(): DavStatusError {
  return new DavStatusError(501, 'the store offers no download endpoint (interface edition 1.0)');
}

/** Files always sit in a folder (never at the root), so there is a listing to outdate. */
function forgetParent(ctx: DavContext, resource: Resource): void {
  if (resource.parent) ctx.services.cache.forget(resource.parent.key);
}

/**
 * Passes exactly `expected` bytes through and fails otherwise, so a store body that breaks off
 * or runs long ends in a cut connection rather than a response that looks complete.
 */
function exactLength(expected: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      seen += chunk.length;
      if (seen > expected) callback(new Error(`the store sent more than the ${expected} bytes announced`));
      else callback(null, chunk);
    },
    flush(callback: TransformCallback) {
      callback(seen === expected ? null : new Error(`the store sent ${seen} of ${expected} bytes`));
    },
  });
}
