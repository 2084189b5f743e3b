/**
 * The one reader of a request body as a stream, for every door that hands a body on (PUT to the
 * store, a Nextcloud chunk or a tus PATCH to the part store). Whoever reads it may stop early
 * (a refusal, a broken store call) without tearing the request down: the answer still has to go
 * out on it, so whatever is left of the body is read off the connection once the stream ends,
 * or the next request on a kept-alive connection never gets parsed.
 */
import type { Hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { DavStatusError } from '../dav-errors.js';

/** A body that passed `maxBytes` (413): the door decides what to answer. */
export class BodyTooLargeError extends DavStatusError {
  constructor(readonly maxBytes: number) {
    super(413, `the body passes the ${maxBytes} bytes it may have`);
    this.name = 'BodyTooLargeError';
  }
}

export interface BodyOptions {
  /**
   * The body ends after this many bytes whatever the connection still carries (Finder's chunked
   * body with X-Expected-Entity-Length and no final 0-chunk, docs/client-quirks.md §1); a
   * request that ends before them fails (400).
   */
  endAfterBytes?: number;
  /**
   * Fails (BodyTooLargeError) as soon as more than this many bytes came: a body without
   * Content-Length could otherwise write any amount before a check after its end.
   */
  maxBytes?: number;
  /** Fed every byte handed on (a checksum checked once the body is in). */
  hash?: Hash;
  /**
   * Told of whatever broke the stream, before it is thrown: the store client or the part store
   * turns what broke its upload into its own error, so the door learns the cause here.
   */
  onFailure?: (err: unknown) => void;
}

export function requestBody(req: IncomingMessage, options: BodyOptions = {}): Readable {
  const { endAfterBytes, maxBytes, hash, onFailure } = options;
  async function* chunks(): AsyncGenerator<Buffer> {
    let seen = 0;
    try {
      if (endAfterBytes === 0) return;
      for await (const chunk of req.iterator({ destroyOnReturn: false })) {
        let bytes = chunk as Buffer;
        const last = endAfterBytes !== undefined && seen + bytes.length >= endAfterBytes;
        if (last) bytes = bytes.subarray(0, endAfterBytes - seen);
        seen += bytes.length;
        if (maxBytes !== undefined && seen > maxBytes) throw new BodyTooLargeError(maxBytes);
        hash?.update(bytes);
        yield bytes;
        if (last) return;
      }
      if (endAfterBytes !== undefined && seen < endAfterBytes) {
        throw new DavStatusError(400, `the body ended after ${seen} of the ${endAfterBytes} bytes it announced`);
      }
    } catch (err) {
      onFailure?.(err);
      throw err;
    } finally {
      // Only now, with the iterator's 'readable' listener gone, does resume() take effect.
      if (!req.complete && !req.destroyed) req.resume();
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}
