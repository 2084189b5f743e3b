/**
 * Nextcloud chunked upload, v1 and v2 (docs.nextcloud.com "Chunked file upload"; rclone's
 * backend/webdav/chunking.go; docs/client-quirks.md §3), as the `uploads` space of
 * remote-dav.ts: `/remote.php/dav/uploads/<user>/<id>/...`, one front door over the
 * upload-session store (upload-service.ts). What each request answers, as Nextcloud does:
 *
 * - MKCOL `<id>`: 201, a new session; 405 when it exists. With `Destination` it is v2 (chunks
 *   numbered 1..10000), its target checked at once by the write path's own target check
 *   (commit.ts checkTarget: 409 no folder there, a group the caller is not in included; 403
 *   without write, a read-only group member, or in the trash or any made-up place);
 *   without, v1 (chunks named by `start-end` byte offsets, `%015d-%015d`, as rclone >= 1.63
 *   sends, or by one number: the byte offset in 16 digits, as Nextcloud desktop's v1 sends, or
 *   an ordinal).
 *   `OC-Total-Length`, whenever it first arrives, is reserved of the quota where the file will go
 *   (507, nothing recorded) and kept; each chunk's Content-Length (which it must have: 411
 *   without) is reserved before its bytes land, beside what the user's other uploads hold, any
 *   instance's (upload-service.ts; docs/bridge-design.md "Uploads held to the quota"). Past
 *   bridge.uploadMaxOpenPerUser open uploads 429, past bridge.uploadMaxParts parts 507.
 * - PUT `<id>/<chunk>`: 201 (a new chunk) or 204 (a chunk re-sent: it replaces the earlier one),
 *   streamed to the PartStore; chunks may come in any order, in parallel, through any instance.
 *   404 when the session is not the caller's live one; 400 for a name the protocol does not know.
 * - PROPFIND `<id>` (Depth 0/1): the chunks that arrived with their sizes, for a client resuming;
 *   PROPFIND of the space's root lists the caller's sessions.
 * - MOVE `<id>/.file` with `Destination` (under /remote.php/dav/files/<user>/ or the drive's own
 *   paths): checks every byte is there once (v1 offsets contiguous from 0, v2 numbers 1..n) and
 *   that the sizes sum to `OC-Total-Length` (400 saying what is missing), then ends in the write
 *   path a PUT ends in (commit.ts commitWrite: 409 no parent, permissions, If header, locks,
 *   quota: 507; the chunks streamed in order into StoreTree.write: a new file 201, or a new
 *   revision 204; `OC-Checksum` verified by the store, 400 on a mismatch with nothing changed;
 *   `X-OC-Mtime` kept). Answers ETag, OC-ETag, OC-FileId and `X-OC-Mtime: accepted` as Nextcloud
 *   does. The session goes once the file is in.
 * - DELETE `<id>`: 204, the upload aborted and its parts removed (404 when there is none:
 *   rclone purges before every upload and takes 404 as "nothing to purge").
 *
 * Refusals carry Sabre's error body (`<s:message>`), which Nextcloud clients show.
 */
import type { IncomingMessage } from 'node:http';
import { StoreError } from '../../store-client/contract.js';
import { UploadCompletedError, type UploadPart, type UploadSession } from '../../contracts/upload-sessions.js';
import { DavStatusError } from '../dav-errors.js';
import { escapeXmlText } from '../dav-xml.js';
import { childHref, encodeHref, parseDestination } from '../href.js';
import { filesPathOf } from '../remote-dav.js';
import type { BridgeUser } from '../sessions.js';
import type { DavPath } from '../store-tree.js';
import { checkQuota, checkTarget, commitWrite, type CommittedWrite } from '../commit.js';
import type { DavContext, VerbHandler } from '../request/context.js';
import { sendEmpty, sendSabreError, XML_TYPE } from '../request/respond.js';
import { limitRefusal, sessionQuota, uploadQuotaAt } from './upload-quota.js';
import { UploadBusyError, UploadGoneError, UploadLimitError } from '../upload-service.js';
import { requestBody } from '../request/body.js';
import { headerValue } from '../request/headers.js';

/** v2: chunks are numbered 1 to 10000 (docs.nextcloud.com); v1 takes as many, a legacy `OC-Chunked` upload as many. */
export const MAX_CHUNKS = 10_000;
/**
 * v1 names as rclone writes them: `%015d-%015d`, first and last byte (inclusive); any count of
 * leading zeros, since clients pad differently (nextcloud-chunk-file-upload to the size's digits).
 */
const V1_RANGE = /^(\d{1,24})-(\d{1,24})$/;
/**
 * A chunk named by one number: a v2 ordinal (Nextcloud desktop pads it to 5 digits) or a v1
 * offset, which the desktop client's v1 pads to 16 ("1e16 is 10 petabyte"): longer than the 15
 * digits of a byte count, so chunk names have their own pattern, held to a safe integer.
 */
const CHUNK_NUMBER = /^\d{1,24}$/;
const NUMBER = /^\d{1,15}$/;

/** The number a chunk name spells, or NaN when it spells none JavaScript holds exactly. */
function chunkNumber(digits: string | undefined): number {
  const n = digits !== undefined && CHUNK_NUMBER.test(digits) ? Number(digits) : NaN;
  return Number.isSafeInteger(n) ? n : NaN;
}
/** The name a MOVE assembles from. */
const FUTURE_FILE = '.file';

/** The request in the space: the session's name and what lies below it. */
function partsOf(ctx: DavContext): { id: string | undefined; chunk: string | undefined; depth: number } {
  const segments = ctx.route?.rest.rawSegments ?? [];
  return { id: segments[0], chunk: segments[1], depth: segments.length };
}

/** OC-Total-Length: a byte count, or undefined when absent; 400 when malformed. */
export function totalLengthOf(req: IncomingMessage): number | undefined {
  const raw = headerValue(req.headers['oc-total-length'])?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (!NUMBER.test(raw)) throw new DavStatusError(400, `OC-Total-Length ${JSON.stringify(raw)} is not a byte count`);
  return Number(raw);
}

/** The drive path a Destination names (required: MOVE; optional: MKCOL, PUT). */
function destinationOf(ctx: DavContext, user: BridgeUser, required: boolean): DavPath | undefined {
  const raw = headerValue(ctx.req.headers.destination);
  if (raw === undefined || raw.trim() === '') {
    if (required) throw new DavStatusError(400, 'Destination header missing');
    return undefined;
  }
  const parsed = parseDestination(raw, ctx.hosts);
  if (parsed.kind === 'other-host') throw new DavStatusError(502, 'Destination is on another server');
  const inDrive = filesPathOf(parsed.path, user.name);
  if (!inDrive || inDrive.segments.length === 0) throw new DavStatusError(400, 'Destination must name a file in your files (/remote.php/dav/files/<user>/...)');
  return inDrive.path as DavPath;
}

/** Whether a session is one of this space's folders (v1 or v2), not another front door's. */
function isSpaceSession(session: UploadSession): boolean {
  return session.protocol === 'nextcloud-v1' || session.protocol === 'nextcloud-v2';
}

/**
 * The caller's live session named `id`; 404 otherwise (another user's is not theirs: the same
 * 404). With `changing`, 423 while an assembly holds it (as Nextcloud answers during a merge).
 */
async function sessionOf(ctx: DavContext, user: BridgeUser, id: string | undefined, changing = false): Promise<UploadSession> {
  const session = id === undefined ? undefined : await ctx.services.uploads.find(user.userId, id);
  // A tus upload (tus.ts) or a legacy `OC-Chunked` one (oc-chunked.ts) is another front door's: not a folder of this space.
  if (!session || !isSpaceSession(session)) throw new DavStatusError(404, 'no such upload');
  if (changing && ctx.services.uploads.isBusy(session)) throw new DavStatusError(423, 'the upload is being assembled');
  return session;
}

/** OC-Total-Length when it comes for the first time (the chunk's reservation records it); 400 if it changes. */
export function newTotalOf(session: UploadSession, totalBytes: number | undefined): number | undefined {
  if (totalBytes === undefined || totalBytes === session.totalBytes) return undefined;
  if (session.totalBytes !== undefined) throw new DavStatusError(400, `OC-Total-Length ${totalBytes} differs from the ${session.totalBytes} this upload announced`);
  return totalBytes;
}

// ---------------------------------------------------------------------------------------------

const mkcol: VerbHandler = async (ctx) => {
  const user = ctx.user();
  const { id, depth } = partsOf(ctx);
  if (depth === 0) throw new DavStatusError(405, 'the upload space exists');
  if (depth > 1) throw new DavStatusError(403, 'an upload folder holds chunks, not folders');
  const destination = destinationOf(ctx, user, false);
  const totalBytes = totalLengthOf(ctx.req);
  if (destination !== undefined) await checkTarget(ctx, destination, 'upload');
  const quota = await uploadQuotaAt(ctx, user, destination);
  ctx.req.resume();
  // OC-Total-Length is reserved of the quota at once (507, nothing recorded, when the user's other
  // uploads leave too little); past bridge.uploadMaxOpenPerUser open uploads, 429.
  let created: UploadSession | undefined;
  try {
    created = await ctx.services.uploads.create(
      user.userId,
      id as string,
      destination === undefined ? 'nextcloud-v1' : 'nextcloud-v2',
      { ...(destination !== undefined ? { destination } : {}), ...(totalBytes !== undefined ? { totalBytes } : {}) },
      quota,
    );
  } catch (err) {
    if (err instanceof UploadLimitError) throw limitRefusal(err);
    throw err;
  }
  if (!created) throw new DavStatusError(405, 'the upload folder exists');
  sendEmpty(ctx, 201);
};

/** Where a chunk sorts, from its name: v2 numbers, v1 `start-end` offsets or ordinals. */
function chunkOrderOf(session: UploadSession, name: string): Pick<UploadPart, 'name' | 'seq' | 'startByte'> {
  if (session.protocol === 'nextcloud-v2') {
    const n = chunkNumber(name);
    if (!(n >= 1 && n <= MAX_CHUNKS)) throw new DavStatusError(400, `chunk ${JSON.stringify(name)}: v2 chunks are numbered 1 to ${MAX_CHUNKS}`);
    return { name, seq: n, startByte: undefined };
  }
  const range = V1_RANGE.exec(name);
  if (range && !Number.isNaN(chunkNumber(range[1])) && !Number.isNaN(chunkNumber(range[2]))) {
    const start = chunkNumber(range[1]);
    if (chunkNumber(range[2]) < start) throw new DavStatusError(400, `chunk ${JSON.stringify(name)}: its end lies before its start`);
    return { name, seq: start, startByte: start };
  }
  if (!Number.isNaN(chunkNumber(name))) return { name, seq: chunkNumber(name), startByte: undefined };
  throw new DavStatusError(400, `chunk ${JSON.stringify(name)}: chunks are named by number or by start-end byte offsets`);
}

const put: VerbHandler = async (ctx) => {
  const user = ctx.user();
  const { id, chunk, depth } = partsOf(ctx);
  if (depth !== 2 || chunk === undefined) throw new DavStatusError(depth < 2 ? 405 : 409, 'chunks go directly into an upload folder');
  if (chunk === FUTURE_FILE) throw new DavStatusError(403, `${FUTURE_FILE} is where an upload is assembled from, with MOVE`);
  if (ctx.req.headers['content-range'] !== undefined) throw new DavStatusError(400, 'PUT with Content-Range is not supported (RFC 9110 §14.5)');
  const session = await sessionOf(ctx, user, id, true);
  const order = chunkOrderOf(session, chunk);
  const destination = destinationOf(ctx, user, false);
  if (destination !== undefined && session.destination !== undefined && destination !== session.destination) {
    throw new DavStatusError(400, `Destination differs from the ${session.destination} this upload is for`);
  }
  const totalBytes = newTotalOf(session, totalLengthOf(ctx.req));
  if (destination !== undefined && session.destination === undefined) await ctx.services.uploads.touch(session, { destination });
  const stored = await receiveChunk(ctx, user, session, order, chunkLengthOf(ctx.req), { totalBytes, destination: (destination ?? session.destination) as DavPath | undefined });
  if (stored) sendEmpty(ctx, stored.replaced ? 204 : 201);
};

/** A chunk's Content-Length, which it must have (411 without). */
export function chunkLengthOf(req: IncomingMessage): number {
  const contentLength = headerValue(req.headers['content-length']);
  const announced = contentLength !== undefined && NUMBER.test(contentLength.trim()) ? Number(contentLength) : undefined;
  // Every client of the protocol knows a chunk's size (rclone, Nextcloud's): a chunk without one
  // could not be held to the quota before its bytes land, and parts not yet assembled would fill
  // the disk unchecked until they expire.
  if (announced === undefined) throw new DavStatusError(411, 'a chunk needs a Content-Length');
  return announced;
}

/**
 * Stores a chunk of `announced` bytes (the request's body) as the part `order` of `session`, held
 * to the total and the quota before its bytes land: what a chunk PUT of v1, v2 and the legacy
 * `OC-Chunked` upload (oc-chunked.ts) all do. `totalBytes`: OC-Total-Length when it comes for the
 * first time (newTotalOf); `destination`: where the file will go, when known. Returns whether the
 * chunk replaced one of its name, or undefined when the client went away meanwhile (nobody to answer).
 */
export async function receiveChunk(
  ctx: DavContext,
  user: BridgeUser,
  session: UploadSession,
  order: Pick<UploadPart, 'name' | 'seq' | 'startByte'>,
  announced: number,
  known: { totalBytes: number | undefined; destination: DavPath | undefined },
): Promise<{ replaced: boolean } | undefined> {
  const chunk = order.name;
  const { totalBytes, destination } = known;
  // Whatever its name, a chunk implies a file of at least its end: a v1 `start-end` name its end
  // byte; a number n (a v2 chunk, a v1 ordinal or offset) n - 1 bytes of chunks before it at the
  // least. Held to OC-Total-Length (400) and to the quota (507), so ten bytes named at 1 TiB or
  // as chunk 60000000 make no sparse file of that size; where a part lies in the file the part
  // store keeps is held within the same bound (withinBytes).
  const implied = (order.startByte ?? Math.max(0, order.seq - 1)) + announced;
  const total = totalBytes ?? session.totalBytes;
  if (total !== undefined && implied > total) throw new DavStatusError(400, `chunk ${JSON.stringify(chunk)} ends past the ${total} bytes of OC-Total-Length`);
  const { uploads } = ctx.services;
  const quota = await sessionQuota(ctx, user, session, destination);
  const elsewhere = Number.isFinite(quota.availableBytes) ? await uploads.reservedElsewhere(quota.scope, session.key) : 0;
  const left = quota.availableBytes - elsewhere;
  if (implied > left) {
    const held = elsewhere > 0 ? `, and other uploads under way hold ${elsewhere} of them` : '';
    throw new DavStatusError(507, `chunk ${JSON.stringify(chunk)} implies a file of ${implied} bytes and ${quota.availableBytes} are left in the quota${held}`, 'quota-not-exceeded');
  }
  // The chunk's bytes (beyond a stored copy it replaces) are reserved before they land, with the
  // total when it first comes: what the user's uploads hold together, any instance's, stays
  // within the quota (507), however many chunks arrive at once.
  let claimedBytes: number;
  try {
    claimedBytes = await uploads.reserve(session, { ...(totalBytes !== undefined ? { totalBytes } : {}), part: { name: chunk, bytes: announced } }, quota.availableBytes);
  } catch (err) {
    if (err instanceof UploadGoneError) throw new DavStatusError(404, 'no such upload');
    if (err instanceof UploadLimitError) throw limitRefusal(err);
    throw err;
  }
  let stored: Awaited<ReturnType<typeof ctx.services.uploads.putPart>>;
  try {
    const withinBytes = total ?? (Number.isFinite(left) ? left : undefined);
    stored = await uploads.putPart(session, order, requestBody(ctx.req), announced, ctx.signal, { claimedBytes, ...(withinBytes !== undefined ? { withinBytes } : {}) });
  } catch (err) {
    if (err instanceof UploadGoneError) throw new DavStatusError(404, 'no such upload');
    if (err instanceof UploadCompletedError) throw new DavStatusError(409, err.message);
    if (ctx.signal.aborted) {
      ctx.log.debug({ err }, 'client went away during a chunk');
      return undefined;
    }
    throw err;
  }
  if (announced !== stored.part.sizeBytes) {
    // The parser holds a body to its Content-Length; a shorter one means the client hung up.
    await uploads.removePart(session, chunk);
    throw new DavStatusError(400, `the chunk ended after ${stored.part.sizeBytes} of its ${announced} bytes`);
  }
  return { replaced: stored.replaced };
}

// ---------------------------------------------------------------------------------------------

function propResponse(href: string, name: string, isCollection: boolean, sizeBytes: number | undefined, modifiedMs: number): string {
  const props = [
    `<d:displayname>${escapeXmlText(name)}</d:displayname>`,
    isCollection ? '<d:resourcetype><d:collection/></d:resourcetype>' : '<d:resourcetype/>',
    `<d:getlastmodified>${new Date(modifiedMs).toUTCString()}</d:getlastmodified>`,
    ...(sizeBytes !== undefined ? [`<d:getcontentlength>${sizeBytes}</d:getcontentlength>`] : []),
  ];
  return `<d:response><d:href>${escapeXmlText(href)}</d:href><d:propstat><d:prop>${props.join('')}</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>`;
}

const propfind: VerbHandler = async (ctx) => {
  const user = ctx.user();
  const { id, chunk, depth } = partsOf(ctx);
  const rawDepth = headerValue(ctx.req.headers.depth)?.trim().toLowerCase() ?? 'infinity';
  if (rawDepth !== '0' && rawDepth !== '1' && rawDepth !== 'infinity') throw new DavStatusError(400, `Depth ${JSON.stringify(rawDepth)}`);
  const withChildren = rawDepth !== '0';
  // The body names properties; these folders have only the few listed here, answered to any.
  for await (const _ of ctx.req) void _;
  const { uploads } = ctx.services;
  const base = ctx.route?.hrefBase ?? '';
  const responses: string[] = [];
  if (depth === 0) {
    const spaceHref = `${base}/`;
    responses.push(propResponse(spaceHref, ctx.route?.owner ?? '', true, undefined, Date.now()));
    if (withChildren) {
      for (const s of (await uploads.list(user.userId)).filter(isSpaceSession)) responses.push(propResponse(childHref(spaceHref, s.name, { collection: true }), s.name, true, undefined, s.createdMs));
    }
  } else {
    const session = await sessionOf(ctx, user, id);
    const sessionHref = base + encodeHref([session.name], { collection: true });
    const parts = await uploads.parts(session);
    if (depth === 1) {
      responses.push(propResponse(sessionHref, session.name, true, undefined, session.createdMs));
      if (withChildren) for (const p of parts) responses.push(propResponse(childHref(sessionHref, p.name), p.name, false, p.sizeBytes, session.createdMs));
    } else {
      const part = depth === 2 ? parts.find((p) => p.name === chunk) : undefined;
      if (!part) throw new DavStatusError(404, 'no such chunk');
      responses.push(propResponse(childHref(sessionHref, part.name), part.name, false, part.sizeBytes, session.createdMs));
    }
  }
  const xml = `<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus xmlns:d="DAV:">${responses.join('')}</d:multistatus>`;
  const body = Buffer.from(xml, 'utf8');
  ctx.res.writeHead(207, { 'Content-Type': XML_TYPE, 'Content-Length': String(body.length) });
  ctx.res.end(body);
};

// ---------------------------------------------------------------------------------------------

/**
 * The parts in assembly order, refused (400, saying what is wrong) unless they are every byte
 * once: v1 offsets run on from 0 without gap or overlap, v2 numbers run 1..n, and the sizes sum
 * to the total when one is known.
 */
export function assemblyOrder(session: UploadSession, parts: readonly UploadPart[], totalBytes: number | undefined): { ordered: UploadPart[]; totalBytes: number } {
  const ordered = [...parts].sort((a, b) => a.seq - b.seq || (a.name < b.name ? -1 : 1));
  const ranged = ordered.filter((p) => p.startByte !== undefined).length;
  if (ranged !== 0 && ranged !== ordered.length) throw new DavStatusError(400, 'chunks named by byte offsets and by number are mixed in one upload');
  let offset = 0;
  ordered.forEach((part, i) => {
    // Numbered chunks run 1..n (a legacy `OC-Chunked` upload's index i is kept as i + 1: oc-chunked.ts).
    if ((session.protocol === 'nextcloud-v2' || session.protocol === 'oc-chunked') && part.seq !== i + 1) throw new DavStatusError(400, `chunk ${session.protocol === 'oc-chunked' ? i : i + 1} is missing`);
    if (part.startByte !== undefined && part.startByte !== offset) {
      throw new DavStatusError(400, part.startByte > offset ? `bytes ${offset} to ${part.startByte - 1} are missing` : `chunk ${part.name} overlaps the bytes before it (they end at ${offset - 1})`);
    }
    offset += part.sizeBytes;
  });
  if (totalBytes !== undefined && offset !== totalBytes) {
    throw new DavStatusError(400, offset < totalBytes ? `the chunks hold ${offset} of the ${totalBytes} bytes of OC-Total-Length` : `the chunks hold ${offset} bytes, more than the ${totalBytes} of OC-Total-Length`);
  }
  return { ordered, totalBytes: offset };
}

const move: VerbHandler = async (ctx) => {
  const user = ctx.user();
  const { id, chunk, depth } = partsOf(ctx);
  if (depth !== 2 || chunk !== FUTURE_FILE) throw new DavStatusError(403, `only ${FUTURE_FILE} of an upload folder can be moved: it assembles the upload`);
  const session = await sessionOf(ctx, user, id);
  const path = destinationOf(ctx, user, true) as DavPath;
  if (session.destination !== undefined && path !== session.destination) throw new DavStatusError(400, `Destination differs from the ${session.destination} this upload is for`);
  const announced = totalLengthOf(ctx.req);
  if (announced !== undefined && session.totalBytes !== undefined && announced !== session.totalBytes) {
    throw new DavStatusError(400, `OC-Total-Length ${announced} differs from the ${session.totalBytes} this upload announced`);
  }
  // One assembly at a time, whichever instance runs it: a second MOVE (a client's retry after a
  // timeout) is 423 until the first ends, then 404 (rclone >= 1.69 takes that 404 as done).
  const outcome = await assemble(ctx, user, session, path, announced ?? session.totalBytes);
  sendEmpty(ctx, outcome.created ? 201 : 204, outcome.headers);
};

/**
 * Assembles `session`'s parts into the file at `path` through the write path a PUT ends in
 * (commitWrite: target, If header and If-Match, locks, quota; the request's `OC-Checksum` and
 * `X-OC-Mtime`), holding the session's assembly lease (423 while another holds it), and removes
 * the session once the file is in. A refusal keeps the session and its parts for another try.
 */
export async function assemble(ctx: DavContext, user: BridgeUser, session: UploadSession, path: DavPath, totalBytes: number | undefined): Promise<CommittedWrite> {
  const { uploads } = ctx.services;
  try {
    return await uploads.whileAssembling(session, async () => {
      const { ordered, totalBytes: sizeBytes } = assemblyOrder(session, await uploads.parts(session), totalBytes);
      const committed = await commitWrite(ctx, user, {
        path,
        door: 'upload',
        sizeBytes,
        heldBy: session,
        checksum: headerValue(ctx.req.headers['oc-checksum']),
        mtime: headerValue(ctx.req.headers['x-oc-mtime']),
        body: async () => {
          await uploads.touch(session);
          return uploads.assembled(session, ordered);
        },
      });
      await uploads.remove(session, { leased: true });
      return committed;
    });
  } catch (err) {
    if (err instanceof UploadBusyError) throw new DavStatusError(423, err.message);
    throw err;
  }
}

const del: VerbHandler = async (ctx) => {
  const user = ctx.user();
  const { id, chunk, depth } = partsOf(ctx);
  if (depth === 0) throw new DavStatusError(403, 'the upload space cannot be deleted');
  const session = await sessionOf(ctx, user, id, true);
  if (depth === 1) {
    try {
      await ctx.services.uploads.remove(session);
    } catch (err) {
      if (err instanceof UploadBusyError) throw new DavStatusError(423, err.message);
      throw err;
    }
  } else if (depth > 2 || !(await ctx.services.uploads.removePart(session, chunk as string))) throw new DavStatusError(404, 'no such chunk');
  sendEmpty(ctx, 204);
};

const ALLOW = 'OPTIONS, MKCOL, PUT, PROPFIND, MOVE, DELETE';

const options: VerbHandler = async (ctx) => {
  sendEmpty(ctx, 200, { Allow: ALLOW });
};

/** Refusals in Sabre's shape (respond.ts sendSabreError); a store refusal keeps its status (dav-errors.ts). */
export function withSabreErrors(handler: VerbHandler): VerbHandler {
  return async (ctx) => {
    try {
      await handler(ctx);
    } catch (err) {
      const status = err instanceof DavStatusError ? err.status : err instanceof StoreError && err.kind === 'invalid' ? 400 : undefined;
      if (status === undefined || status >= 500 && status !== 507 || ctx.res.headersSent) throw err;
      // A store's refusal (the OC-Checksum mismatch) says only what kind it was.
      const message = err instanceof DavStatusError ? err.message : 'the content does not match OC-Checksum, or the store refused it as invalid';
      sendSabreError(ctx, status, message, err instanceof DavStatusError ? err.headers : {});
    }
  };
}

/** The uploads space's verbs (remote-spaces.ts); any other method is 405. */
export const nextcloudUploadHandlers: Record<string, VerbHandler> = Object.fromEntries(
  Object.entries({ MKCOL: mkcol, PUT: put, PROPFIND: propfind, MOVE: move, DELETE: del, OPTIONS: options }).map(([method, handler]) => [method, withSabreErrors(handler)]),
);
