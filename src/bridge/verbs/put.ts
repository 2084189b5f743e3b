/**
 * PUT (RFC 9110 §9.3.4, RFC 4918 §9.7): the request body streamed into the store's two-step
 * upload (store-tree.write; the upload token is fetched right before the body starts), a new file
 * (201) or a new revision of the file there (204), answered only after the store confirmed. A
 * failed upload never answers success, and the previous revision stays as it was: the store adds
 * a revision only once its bytes are complete (docs/api.md "Upload"), so nothing is overwritten early.
 *
 * Bodies: Content-Length, or chunked. Finder sends chunked with `X-Expected-Entity-Length: N`
 * and sometimes never the final 0-chunk (docs/client-quirks.md §1; webdav-server hangs there:
 * OpenMarshal#108): N is the size hint for the store, and the body ends after N bytes whether or
 * not the 0-chunk comes; the answer then carries `Connection: close`, since the connection's
 * framing can no longer be trusted. Bodies up to 64 KiB with a Content-Length are read whole
 * before they go to the store; larger ones are never buffered.
 *
 * Preconditions, all before a byte of the body is read: Content-Range is refused (400, RFC 9110
 * §14.5: a partial PUT must never replace the whole file); then the write path every door ends in
 * (commit.ts: a collection is 405, a missing parent 409, permissions 403; If header, If-Match,
 * If-None-Match: *, locks; the quota when the size is known, 507). `Expect: 100-continue` is
 * answered by Node itself before this handler runs (no `checkContinue` listener), and an error is
 * answered without waiting for the body (litmus http/expect100).
 *
 * Client mtimes: a sane `X-OC-Mtime: <unix seconds>` (rclone, docs/client-quirks.md §3, §3b) is kept for the node and
 * answered with `X-OC-Mtime: accepted`; a PUT without it forgets a kept mtime (the content changed,
 * so the store's time is the right one again). The answer carries ETag, OC-ETag, OC-FileId,
 * OC-Checksum and Last-Modified of what was written (commit.ts).
 *
 * `OC-Checksum: SHA1:<hex>` (or MD5, or several; rclone's owncloud vendor, ownCloud and
 * Nextcloud clients) is verified against the bytes before the store records them: a mismatch is
 * 400 and the old content, revision and ETag stay (docs/extensions.md "Checksums").
 */
import type { IncomingMessage } from 'node:http';
import { commitWrite, type CommittedWrite } from '../commit.js';
import { DavStatusError } from '../dav-errors.js';
import type { VerbHandler } from '../request/context.js';
import { sendEmpty } from '../request/respond.js';
import { requestBody } from '../request/body.js';
import { headerValue } from '../request/headers.js';

/** How many body bytes to expect: undefined when only the end of a chunked body tells. */
function bodySizeOf(req: IncomingMessage): { sizeBytes: number | undefined; endsAfterHint: boolean } {
  const contentLength = headerValue(req.headers['content-length']);
  if (contentLength !== undefined) return { sizeBytes: Number(contentLength), endsAfterHint: false };
  const isChunked = /\bchunked\b/i.test(headerValue(req.headers['transfer-encoding']) ?? '');
  if (!isChunked) return { sizeBytes: 0, endsAfterHint: false };
  const hint = headerValue(req.headers['x-expected-entity-length'])?.trim();
  if (hint !== undefined && /^\d{1,15}$/.test(hint)) return { sizeBytes: Number(hint), endsAfterHint: true };
  return { sizeBytes: undefined, endsAfterHint: false };
}

/**
 * Bodies up to this size with a Content-Length are read whole and handed to the store as one
 * Buffer: for a small file the stream plumbing (an async generator, Readable.from, the store's
 * async iteration) cost more than the bytes. Larger or chunked bodies stream, never buffered.
 */
const WHOLE_BODY_MAX_BYTES = 64 * 1024;

/** The whole body of `sizeBytes` (the parser holds the request to its Content-Length). */
async function wholeBody(req: IncomingMessage, sizeBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let seen = 0;
  for await (const chunk of req) {
    chunks.push(chunk as Buffer);
    seen += (chunk as Buffer).length;
  }
  if (seen !== sizeBytes) throw new DavStatusError(400, `the body ended after ${seen} of its ${sizeBytes} bytes`);
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, seen);
}

export const put: VerbHandler = async (ctx) => {
  const user = ctx.user();
  const { req } = ctx;
  if (req.headers['content-range'] !== undefined) throw new DavStatusError(400, 'PUT with Content-Range is not supported (RFC 9110 §14.5)');

  const { sizeBytes, endsAfterHint } = bodySizeOf(req);
  // What broke a streamed body, if anything did: the store client makes its own error of it.
  let bodyFailure: unknown;
  let wentAway = false;
  let committed: CommittedWrite;
  try {
    committed = await commitWrite(ctx, user, {
      path: ctx.path,
      door: 'put',
      sizeBytes,
      checksum: headerValue(req.headers['oc-checksum']),
      mtime: headerValue(req.headers['x-oc-mtime']),
      body: async () => {
        if (endsAfterHint || sizeBytes === undefined || sizeBytes > WHOLE_BODY_MAX_BYTES) {
          return requestBody(req, { endAfterBytes: endsAfterHint ? sizeBytes : undefined, onFailure: (err) => (bodyFailure ??= err) });
        }
        try {
          return await wholeBody(req, sizeBytes);
        } catch (err) {
          wentAway = req.destroyed;
          throw err;
        }
      },
    });
  } catch (err) {
    // The client hung up mid-body: nobody is left to answer, and the store kept the old revision.
    if (ctx.signal.aborted || wentAway) {
      ctx.log.debug({ err }, 'client went away during the upload');
      return;
    }
    // A Finder body shorter than its X-Expected-Entity-Length: the client's fault, whatever
    // the store client made of the upload it broke off.
    if (bodyFailure instanceof DavStatusError) throw bodyFailure;
    throw err;
  }

  const { headers } = committed;
  // Finder's body without the 0-chunk: the parser still waits for it, so this connection's
  // framing is lost; the client must open a new one for its next request.
  if (!req.complete) headers.Connection = 'close';
  sendEmpty(ctx, committed.created ? 201 : 204, headers);
};
