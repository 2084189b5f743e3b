/**
 * Bulk upload: `POST /remote.php/dav/bulk`, many small files in one request, as the Nextcloud
 * desktop client sends them when the capabilities say `dav.bulkupload` (docs/client-quirks.md
 * "Bulk upload": its libsync bulkpropagatorjob.cpp and putmultifilejob.cpp; the answer's shape
 * is Nextcloud server's apps/dav/lib/BulkUpload/BulkUploadPlugin.php).
 *
 * The body is `multipart/related; boundary=...`; each part is one file: `X-File-Path` (the path
 * below the caller's files root, raw UTF-8, `/` separated), `Content-Length` (required: the part's
 * bytes are read by it, never searched for the boundary), `X-File-MD5` (hex, as the desktop sends
 * it; `MD5:<hex>` taken too) and/or `OC-Checksum` (one of them is required: the store verifies
 * it), `X-File-Mtime` (or `X-OC-Mtime`), an optional `If-Match`. The answer is 200 with a JSON
 * object keyed by each part's X-File-Path: `{error: false, etag, fileid, permissions}` (and the
 * headers the desktop looks for there: `OC-ETag`, `OC-FileID`, `X-OC-MTime: accepted`), or
 * `{error: true, message}` for a part refused.
 *
 * Two phases. First the whole body is read and checked: its framing (a boundary, every part's
 * headers and length, the closing delimiter), the limits below, every path (no `.`, `..` or empty
 * segment, no NUL, not twice in one request); a part of up to SMALL_PART_BYTES stays in memory
 * while the request's parts held there stay under MEMORY_BYTES, any other is streamed to a
 * private file (0600) in the request's own folder (0700) under the data folder's `bulk/`
 * (BridgeServices.bulk.stagingDir; never the system /tmp), removed however the request ends, so
 * the body is never held whole. Nothing is kept past the caller's quota: a body declared larger
 * than the room of any drive of the caller is a 507 before it is read, and a part that would take
 * the bytes kept for its drive past that drive's room is read past, not kept, and answered 507 in
 * its entry. A user runs at most a few bulk uploads at once (bulk-gate.ts). Anything wrong there
 * is a 400 (or 413 for a limit) and nothing is written. Then every part goes through THE write path (commit.ts
 * commitWrite: target and permissions, the request's If header and the part's If-Match, locks,
 * quota, the checksum verified by the store as the bytes arrive): a part refused there is answered
 * in its own entry while the others land. The writes run a few at a time inside one group commit
 * (StoreTree.groupCommit): one fsync of the store's WAL for the request, not one per file.
 */
import { createReadStream, createWriteStream, promises as fs, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { makePrivateDir, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../common/private-files.js';
import { commitWrite, quotaRoomAt, type QuotaRoom } from '../commit.js';
import { davFailureOf, DavStatusError } from '../dav-errors.js';
import { normalizeName } from '../href.js';
import type { DavContext, VerbHandler } from '../request/context.js';
import { sendSabreError } from '../request/respond.js';
import { headerValue } from '../request/headers.js';
import { ocPermissions } from '../oc-permissions.js';
import type { DavPath, Resource } from '../store-tree.js';

/** The bounds of one bulk request (the desktop sends at most 100 parts, each under its chunk size). */
export const BULK_LIMITS = {
  /** Parts in one request. */
  maxParts: 1000,
  /** Bytes of one part. */
  maxPartBytes: 100 * 1024 * 1024,
  /** Bytes of all parts together. */
  maxTotalBytes: 1024 * 1024 * 1024,
  /** A part up to this size may stay in memory... */
  smallPartBytes: 1024 * 1024,
  /** ...while the request's parts in memory stay under this; the rest go to temp files. */
  memoryBytes: 16 * 1024 * 1024,
  /** One header line of a part, and the preamble before the first boundary. */
  maxLineBytes: 16 * 1024,
  /** Header lines of one part. */
  maxHeaders: 64,
  /** Parts written at once (they share the group commit's fsync either way). */
  writesAtOnce: 8,
  /** What a declared Content-Length may exceed the caller's largest room by: the multipart framing. */
  framingAllowanceBytes: 1024 * 1024,
} as const;

/** A part, read and checked, waiting for its write. */
interface BulkPart {
  /** X-File-Path as the client sent it: the answer's key. */
  key: string;
  path: DavPath;
  sizeBytes: number;
  checksum: string;
  mtime: string | undefined;
  ifMatch: string | undefined;
  /** The bytes in memory, the staged file that holds them, or why they were not kept (over the quota). */
  data: Buffer | { file: string } | { refused: string };
}

type BulkEntry = { error: false; etag: string; 'OC-ETag': string; fileid: string; 'OC-FileID': string; permissions: string; 'X-OC-MTime'?: string } | { error: true; message: string };

const bad = (message: string): DavStatusError => new DavStatusError(400, message);
const tooLarge = (message: string): DavStatusError => new DavStatusError(413, message);

/** The boundary of `multipart/related; boundary=...` (quoted or not); 400 for anything else. */
export function bulkBoundaryOf(contentType: string | undefined): string {
  if (!contentType) throw bad('a bulk upload is multipart/related with a boundary: no Content-Type');
  const [type, ...params] = contentType.split(';');
  if (type?.trim().toLowerCase() !== 'multipart/related') throw bad('a bulk upload is multipart/related');
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'boundary') continue;
    let value = param.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    // RFC 2046 §5.1.1: 1 to 70 characters.
    if (value.length < 1 || value.length > 70) throw bad('the multipart boundary must be 1 to 70 characters');
    return value;
  }
  throw bad('the multipart/related Content-Type names no boundary');
}

/**
 * X-File-Path as a path below the caller's files root: `/`-separated raw UTF-8 (the desktop sends
 * it unescaped), a leading `/` optional; `.`, `..`, empty segments and NUL are refused (400), so
 * no part can name anything outside the tree it is written into.
 */
export function bulkPathOf(raw: string): DavPath {
  if (raw.includes('\0')) throw bad('X-File-Path contains NUL');
  const segments = (raw.startsWith('/') ? raw.slice(1) : raw).split('/');
  if (segments.length === 0 || segments.some((s) => s === '')) throw bad(`X-File-Path "${raw}" has an empty segment`);
  for (const segment of segments) {
    if (segment === '.' || segment === '..') throw bad(`X-File-Path "${raw}" leaves its folder ("${segment}")`);
    if (Buffer.byteLength(segment, 'utf8') > 255) throw bad('a segment of X-File-Path is longer than 255 bytes');
  }
  return ('/' + segments.map(normalizeName).join('/')) as DavPath;
}

const CRLF = Buffer.from('\r\n');

/** Pulls lines and counted bytes out of a request body, chunk by chunk. */
class BodyReader {
  private buffer: Buffer = Buffer.alloc(0);
  private ended = false;
  private readonly chunks: AsyncIterator<Buffer>;

  constructor(source: AsyncIterable<Buffer>) {
    this.chunks = source[Symbol.asyncIterator]();
  }

  private async fill(): Promise<boolean> {
    if (this.ended) return false;
    const next = await this.chunks.next();
    if (next.done) {
      this.ended = true;
      return false;
    }
    this.buffer = this.buffer.length === 0 ? next.value : Buffer.concat([this.buffer, next.value]);
    return true;
  }

  /** The next line without its CRLF; undefined at the body's end. */
  async line(maxBytes: number): Promise<Buffer | undefined> {
    for (;;) {
      const at = this.buffer.indexOf(CRLF);
      if (at >= 0) {
        const line = this.buffer.subarray(0, at);
        this.buffer = this.buffer.subarray(at + 2);
        return line;
      }
      if (this.buffer.length > maxBytes) throw bad(`a line of the multipart body is longer than ${maxBytes} bytes`);
      if (!(await this.fill())) return undefined;
    }
  }

  /** Exactly `length` bytes, handed to `sink` as they come; 400 when the body ends first. */
  async bytes(length: number, sink: (chunk: Buffer) => void | Promise<void>): Promise<void> {
    let left = length;
    while (left > 0) {
      if (this.buffer.length === 0 && !(await this.fill())) throw bad('the multipart body ends inside a part');
      const take = Math.min(left, this.buffer.length);
      await sink(this.buffer.subarray(0, take));
      this.buffer = this.buffer.subarray(take);
      left -= take;
    }
  }

  /** Reads and drops what is left (the epilogue). */
  async drain(): Promise<void> {
    this.buffer = Buffer.alloc(0);
    while (await this.fill()) this.buffer = Buffer.alloc(0);
  }
}

/** Writes into a file, waiting when the stream asks to. */
async function writeTo(stream: WriteStream, chunk: Buffer): Promise<void> {
  if (!stream.write(chunk)) await once(stream, 'drain');
}

/** A checked part's headers: the checksum the store will verify, its mtime and If-Match. */
function partFields(headers: Map<string, string>): Pick<BulkPart, 'key' | 'path' | 'sizeBytes' | 'checksum' | 'mtime' | 'ifMatch'> {
  const key = headers.get('x-file-path');
  if (key === undefined || key === '') throw bad('a part has no X-File-Path');
  const length = headers.get('content-length');
  if (length === undefined || !/^\d{1,15}$/.test(length)) throw bad(`the part for "${key}" has no Content-Length`);
  const sizeBytes = Number(length);
  if (sizeBytes > BULK_LIMITS.maxPartBytes) throw tooLarge(`the part for "${key}" is larger than ${BULK_LIMITS.maxPartBytes} bytes`);
  const checksums: string[] = [];
  const md5 = headers.get('x-file-md5');
  if (md5 !== undefined) checksums.push(/^md5:/i.test(md5) ? md5 : `MD5:${md5}`);
  const ocChecksum = headers.get('oc-checksum');
  if (ocChecksum !== undefined) checksums.push(ocChecksum);
  if (checksums.length === 0) throw bad(`the part for "${key}" has neither X-File-MD5 nor OC-Checksum`);
  return { key, path: bulkPathOf(key), sizeBytes, checksum: checksums.join(' '), mtime: headers.get('x-file-mtime') ?? headers.get('x-oc-mtime'), ifMatch: headers.get('if-match') };
}

/** Where phase one keeps what it reads. */
interface Staging {
  /** The private folder (0700) the request's folder is made in (BridgeServices.bulk.stagingDir). */
  root: string;
  /** The request's own folder (0700), once a part is staged in it: removed however the request ends. */
  dir?: string;
  /** The quota where a part lands (its drive's: the path's first segment). */
  roomOf(path: DavPath): Promise<QuotaRoom>;
}

/**
 * Reads the whole body into checked parts (phase one). Throws DavStatusError (400, 413) for a
 * body that is not what it must be; the staged files it made are in `staging.dir` either way.
 * The bytes kept for one quota never exceed what it has left: a part that would is not kept
 * (read past, answered 507 in its entry), so no request stages more than its caller could store.
 */
async function readParts(source: AsyncIterable<Buffer>, boundary: string, staging: Staging): Promise<BulkPart[]> {
  const reader = new BodyReader(source);
  const delimiter = `--${boundary}`;
  const close = `--${boundary}--`;
  /** A boundary line: the delimiter, then optional transport padding (RFC 2046 §5.1.1). */
  const boundaryLine = (line: Buffer): 'next' | 'end' | undefined => {
    const text = line.toString('utf8').replace(/[ \t]+$/, '');
    return text === close ? 'end' : text === delimiter ? 'next' : undefined;
  };
  // The preamble, up to the first delimiter.
  let preamble = 0;
  for (;;) {
    const line = await reader.line(BULK_LIMITS.maxLineBytes);
    if (line === undefined) throw bad('the multipart body holds no boundary');
    const kind = boundaryLine(line);
    if (kind === 'end') return [];
    if (kind === 'next') break;
    preamble += line.length + 2;
    if (preamble > BULK_LIMITS.maxLineBytes) throw bad('the multipart body does not start with its boundary');
  }
  const parts: BulkPart[] = [];
  const seen = new Set<string>();
  let total = 0;
  let inMemory = 0;
  /** Bytes kept so far per quota scope. */
  const kept = new Map<string, number>();
  for (;;) {
    if (parts.length >= BULK_LIMITS.maxParts) throw tooLarge(`a bulk upload holds at most ${BULK_LIMITS.maxParts} parts`);
    const headers = new Map<string, string>();
    for (;;) {
      const line = await reader.line(BULK_LIMITS.maxLineBytes);
      if (line === undefined) throw bad('the multipart body ends inside a part’s headers');
      if (line.length === 0) break;
      const text = line.toString('utf8');
      const colon = text.indexOf(':');
      if (colon <= 0) throw bad('a part’s header line has no name');
      if (headers.size >= BULK_LIMITS.maxHeaders) throw bad(`a part has more than ${BULK_LIMITS.maxHeaders} header lines`);
      headers.set(text.slice(0, colon).trim().toLowerCase(), text.slice(colon + 1).trim());
    }
    const fields = partFields(headers);
    if (seen.has(fields.path)) throw bad(`X-File-Path "${fields.key}" comes twice`);
    seen.add(fields.path);
    total += fields.sizeBytes;
    if (total > BULK_LIMITS.maxTotalBytes) throw tooLarge(`a bulk upload holds at most ${BULK_LIMITS.maxTotalBytes} bytes`);
    let data: BulkPart['data'];
    const room = await staging.roomOf(fields.path);
    const keptThere = kept.get(room.scope) ?? 0;
    if (keptThere + fields.sizeBytes > room.availableBytes) {
      await reader.bytes(fields.sizeBytes, () => undefined);
      const left = Math.max(0, room.availableBytes - keptThere);
      data = { refused: `507: the write needs ${fields.sizeBytes} bytes and ${left} are left in the quota beside this request's other parts` };
    } else if (fields.sizeBytes <= BULK_LIMITS.smallPartBytes && inMemory + fields.sizeBytes <= BULK_LIMITS.memoryBytes) {
      const chunks: Buffer[] = [];
      await reader.bytes(fields.sizeBytes, (chunk) => {
        chunks.push(chunk);
      });
      inMemory += fields.sizeBytes;
      kept.set(room.scope, keptThere + fields.sizeBytes);
      data = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, fields.sizeBytes);
    } else {
      kept.set(room.scope, keptThere + fields.sizeBytes);
      if (staging.dir === undefined) {
        await makePrivateDir(staging.root);
        // mkdtemp makes it 0700; said again so no umask or platform default can open it.
        staging.dir = await fs.mkdtemp(path.join(staging.root, 'request-'));
        await fs.chmod(staging.dir, PRIVATE_DIR_MODE);
      }
      const file = path.join(staging.dir, String(parts.length));
      const out = createWriteStream(file, { mode: PRIVATE_FILE_MODE, flags: 'wx' });
      try {
        await reader.bytes(fields.sizeBytes, (chunk) => writeTo(out, chunk));
      } finally {
        await new Promise<void>((resolve) => out.end(() => resolve()));
      }
      data = { file };
    }
    parts.push({ ...fields, data });
    const after = await reader.line(BULK_LIMITS.maxLineBytes);
    if (after === undefined || after.length !== 0) throw bad(`the part for "${fields.key}" is longer than its Content-Length, or the body ends after it`);
    const next = await reader.line(BULK_LIMITS.maxLineBytes);
    if (next === undefined) throw bad('the multipart body ends without its closing boundary');
    const kind = boundaryLine(next);
    if (kind === undefined) throw bad(`the part for "${fields.key}" is not followed by the boundary`);
    if (kind === 'end') break;
  }
  await reader.drain();
  return parts;
}

/** The request as one part sees it: the request's If header, the part's own If-Match. */
function partContext(ctx: DavContext, part: BulkPart): DavContext {
  const headers: Record<string, string | undefined> = { if: headerValue(ctx.req.headers.if), 'if-match': part.ifMatch };
  const req = Object.create(ctx.req, { headers: { value: headers } }) as DavContext['req'];
  return Object.create(ctx, { req: { value: req }, path: { value: part.path } }) as DavContext;
}

/** Phase two for one part: THE write path, answered as the part's entry. */
async function writePart(ctx: DavContext, part: BulkPart): Promise<BulkEntry> {
  if ('refused' in part.data) return { error: true, message: part.data.refused };
  const data = part.data;
  const user = ctx.user();
  const partCtx = partContext(ctx, part);
  try {
    const committed = await commitWrite(partCtx, user, {
      path: part.path,
      door: 'put',
      sizeBytes: part.sizeBytes,
      checksum: part.checksum,
      mtime: part.mtime,
      body: (): Buffer | Readable => (Buffer.isBuffer(data) ? data : createReadStream(data.file)),
    });
    const { headers } = committed;
    const written = await ctx.services.tree.tryStat(user, part.path);
    const permissions = written ? ocPermissions(written, await ctx.services.tree.privileges(user, written as Resource, { exact: true }), false) : '';
    const etag = (headers.ETag ?? '').replace(/^"|"$/g, '');
    const fileId = headers['OC-FileId'] ?? '';
    return { error: false, etag, 'OC-ETag': etag, fileid: fileId, 'OC-FileID': fileId, permissions, ...(headers['X-OC-Mtime'] ? { 'X-OC-MTime': headers['X-OC-Mtime'] } : {}) };
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    const failure = davFailureOf(err);
    if (failure.status >= 500 && !failure.clientCaused) ctx.log.warn({ err, path: part.key }, 'bulk upload part failed');
    return { error: true, message: `${failure.status}: ${failure.message}` };
  }
}

/** Runs `work` over `items`, `width` at a time; results in the items' order. */
async function inWaves<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const at = next++;
      results[at] = await work(items[at] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  return results;
}

/**
 * The most the caller has left in any drive it could write to (Infinity when one has no limit):
 * its own quota, and, only when the request is larger than that, each drive at its root's.
 */
async function largestRoom(ctx: DavContext, above: number): Promise<number> {
  const user = ctx.user();
  let largest = (await quotaRoomAt(ctx, user, undefined)).availableBytes;
  if (largest >= above) return largest;
  const { tree } = ctx.services;
  const root = await tree.tryStat(user, '/' as DavPath);
  if (!root) return largest;
  for (const drive of await tree.list(user, root)) {
    const quota = await tree.quota(user, drive);
    largest = Math.max(largest, quota?.availableBytes ?? Number.POSITIVE_INFINITY);
    if (largest >= above) break;
  }
  return largest;
}

export const bulkUpload: VerbHandler = async (ctx) => {
  const user = ctx.user();
  if (ctx.target.segments.length > 0) throw new DavStatusError(404, 'a bulk upload is posted to /remote.php/dav/bulk itself');
  let boundary: string;
  try {
    boundary = bulkBoundaryOf(headerValue(ctx.req.headers['content-type']));
  } catch (err) {
    sendSabreError(ctx, 400, (err as Error).message);
    return;
  }
  // Bounded per user and in all (bulk-gate.ts): each holds memory and staged bytes while it reads.
  const gone = new AbortController();
  ctx.req.once('close', () => gone.abort());
  const leave = await ctx.services.bulk.gate.enter(user.userId, gone.signal);
  if (gone.signal.aborted) {
    leave?.();
    return;
  }
  if (!leave) {
    sendSabreError(ctx, 503, 'too many bulk uploads at once; retry shortly', { 'Retry-After': '5' });
    return;
  }
  const rooms = new Map<string, Promise<QuotaRoom>>();
  const staging: Staging = {
    root: ctx.services.bulk.stagingDir,
    roomOf: (at) => {
      const drive = `/${at.split('/')[1] ?? ''}` as DavPath;
      let room = rooms.get(drive);
      if (!room) rooms.set(drive, (room = quotaRoomAt(ctx, user, drive)));
      return room;
    },
  };
  // The answer is sent once the staged files are gone and the slot is given back: a client that
  // posts its next bulk upload as soon as it has the answer is not refused for this one.
  let answer: (() => void) | undefined;
  try {
    answer = await bulkAnswer(ctx, boundary, staging);
  } finally {
    try {
      if (staging.dir) await fs.rm(staging.dir, { recursive: true, force: true });
    } finally {
      leave();
    }
  }
  answer?.();
};

/** Both phases of one bulk upload: what to answer (undefined: nothing, the client is gone). */
async function bulkAnswer(ctx: DavContext, boundary: string, staging: Staging): Promise<(() => void) | undefined> {
  // A body declared larger than any drive of the caller can take is refused before a byte of it is read.
  const declared = Number(headerValue(ctx.req.headers['content-length']) ?? NaN);
  if (Number.isFinite(declared)) {
    const room = await largestRoom(ctx, declared - BULK_LIMITS.framingAllowanceBytes);
    if (declared > room + BULK_LIMITS.framingAllowanceBytes) {
      return () => sendSabreError(ctx, 507, `the bulk upload is ${declared} bytes and the caller has at most ${room} left in the quota`);
    }
  }
  let parts: BulkPart[];
  try {
    parts = await readParts(ctx.req as AsyncIterable<Buffer>, boundary, staging);
  } catch (err) {
    // A body that is no well-formed bulk upload: said in Sabre's shape, whose s:message the desktop shows.
    if (!(err instanceof DavStatusError) || ctx.signal.aborted) throw err;
    return () => sendSabreError(ctx, err.status, err.message);
  }
  const entries = await ctx.services.tree.groupCommit(() => inWaves(parts, BULK_LIMITS.writesAtOnce, (part) => writePart(ctx, part)));
  if (ctx.signal.aborted) return undefined;
  const answer: Record<string, BulkEntry> = {};
  parts.forEach((part, i) => {
    answer[part.key] = entries[i] as BulkEntry;
  });
  const body = JSON.stringify(answer);
  return () => {
    ctx.res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(Buffer.byteLength(body)) });
    ctx.res.end(body);
  };
}

/** The `bulk` space's methods (remote-spaces.ts). */
export const bulkHandlers: Readonly<Record<string, VerbHandler>> = { POST: bulkUpload };
