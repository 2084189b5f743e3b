/**
 * tus 1.0 (tus.io/protocols/resumable-upload: core, creation, creation-with-upload, termination,
 * checksum, expiration) as ownCloud Infinite Scale offers it, the second front door over the
 * upload-session store (upload-service.ts) beside Nextcloud chunking (nextcloud.ts):
 *
 * - POST to a folder of the drive (`/home/docs/`, `/remote.php/dav/files/<user>/docs/`) with
 *   `Tus-Resumable: 1.0.0`, `Upload-Length` and `Upload-Metadata` (`filename`, optional `mtime`
 *   in unix seconds, optional `checksum` `sha1 <hex|base64>`, also `md5`): the target is checked
 *   as the commit will check it (commit.ts checkWritable: 409 a folder of that name, 403
 *   permissions, 412 If, 423 locks, 507 the quota against Upload-Length beside the user's other
 *   uploads; 413 over Tus-Max-Size), Upload-Length reserved of the quota (507; 429 past
 *   bridge.uploadMaxOpenPerUser), nothing recorded on a refusal, nor when the first PATCH riding
 *   on the POST is refused (its client never learnt the Location); then 201 with `Location:
 *   /remote.php/dav/tus/<user>/<id>` (the `tus` space of remote-dav.ts, the caller's alone) and
 *   `Upload-Expires`. A body with `Content-Type: application/offset+octet-stream` is the first
 *   PATCH (creation-with-upload).
 * - PATCH `<id>` with `Upload-Offset` and `Content-Type: application/offset+octet-stream`: 409
 *   unless the offset is what arrived, 415 for another type; the body becomes one part of the
 *   session (named by its start offset, so the assembly is Nextcloud v1's, assemblyOrder), an
 *   `Upload-Checksum` is checked against that body (460, the part dropped); 204 with the new
 *   `Upload-Offset`. The PATCH that reaches Upload-Length commits the file by the write path a
 *   PUT ends in (commit.ts commitWrite: the target, permissions, the If header this PATCH sends
 *   and locks, the quota, then a new file or a new revision; the metadata checksum verified by
 *   the store, 460 and the upload removed on a mismatch; mtime kept) before it answers; a refused
 *   commit (a lock taken since the POST: 423) keeps the upload, and a PATCH of no bytes at the
 *   end offset tries the commit again.
 * - POST `<id>` with `X-HTTP-Method-Override: PATCH` (tus-js-client's overridePatchMethod) is a PATCH.
 * - HEAD `<id>`: Upload-Offset, Upload-Length, Upload-Expires (`Cache-Control: no-store`), read
 *   from the database, so any instance resumes what another started. When every byte is in but
 *   the commit failed (quota, the store away), HEAD commits first: a client resuming at
 *   offset = length sends nothing more. DELETE `<id>`: 204, removed.
 * - OPTIONS: Tus-Version, Tus-Extension, Tus-Max-Size, Tus-Checksum-Algorithm (also merged into
 *   the drive's OPTIONS, verbs/options.ts).
 *
 * Every answer to a tus request, a refusal included, carries Tus-Resumable. A POST without Tus-Resumable is 405, as every POST was before tus. Another user's upload is 404, as is an upload that finished, expired or was terminated.
 * The session keeps the target and the metadata as JSON in its `destination` (the session table
 * has no other column for them); Upload-Length is its `totalBytes`.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { StoreError } from '../../store-client/contract.js';
import type { UploadSession } from '../../contracts/upload-sessions.js';
import { DavStatusError } from '../dav-errors.js';
import type { BridgeUser } from '../sessions.js';
import { toDavPath, type DavPath } from '../store-tree.js';
import { checkWritable, commitWrite, type CommittedWrite } from '../commit.js';
import type { DavContext, VerbHandler } from '../request/context.js';
import { sendEmpty } from '../request/respond.js';
import { assemblyOrder } from './nextcloud.js';
import { limitRefusal, sessionQuota, uploadQuotaAt } from './upload-quota.js';
import { UploadBusyError, UploadGoneError, UploadLimitError } from '../upload-service.js';
import { BodyTooLargeError, requestBody } from '../request/body.js';
import { headerValue } from '../request/headers.js';
import { CHECKSUM_ALGORITHMS, TUS_MAX_SIZE, TUS_OPTIONS_HEADERS, TUS_VERSION } from '../tus-headers.js';

const OFFSET_TYPE = 'application/offset+octet-stream';
const NUMBER = /^\d{1,15}$/;

/** A tus refusal (status, message) answered with Tus-Resumable like every tus answer. */
class TusError extends DavStatusError {
  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(status, message, undefined, { 'Tus-Resumable': TUS_VERSION, ...headers });
  }
}

/** The upload service's limits as tus answers them (upload-quota.ts): 507 quota or parts, 429 open uploads. */
function tusLimitRefusal(err: unknown): unknown {
  return err instanceof UploadLimitError ? limitRefusal(err, { 'Tus-Resumable': TUS_VERSION }) : err;
}

/** What the session's `destination` holds for a tus upload. */
interface TusTarget {
  path: DavPath;
  /** Unix seconds, from the metadata's `mtime`. */
  mtime?: string;
  /** The whole file's checksum as OC-Checksum spells it (`SHA1:<hex>`), for the store to verify. */
  checksum?: string;
}

function numberHeader(req: IncomingMessage, name: string): number | undefined {
  const raw = headerValue(req.headers[name])?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (!NUMBER.test(raw)) throw new TusError(400, `${name} ${JSON.stringify(raw)} is not a byte count`);
  return Number(raw);
}

/** 412 unless the client speaks tus 1.0.0 (core: every request but OPTIONS sends Tus-Resumable). */
function requireTusResumable(req: IncomingMessage): void {
  const version = headerValue(req.headers['tus-resumable'])?.trim();
  if (version !== TUS_VERSION) throw new TusError(412, `Tus-Resumable ${JSON.stringify(version ?? '')}: this server speaks ${TUS_VERSION}`, { 'Tus-Version': TUS_VERSION });
}

/** Upload-Metadata: comma-separated `key base64value` pairs (the value may be missing). */
export function parseUploadMetadata(raw: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (raw === undefined || raw.trim() === '') return out;
  for (const pair of raw.split(',')) {
    const [key, value, extra] = pair.trim().split(' ');
    if (!key || extra !== undefined || (value !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(value))) throw new TusError(400, `Upload-Metadata pair ${JSON.stringify(pair.trim())} is not \`key base64\``);
    out.set(key, value === undefined ? '' : Buffer.from(value, 'base64').toString('utf8'));
  }
  return out;
}

/** `sha1 <digest>` (hex, as oCIS sends, or base64, as tus's checksum extension) -> its algorithm and hex digest. */
function parseChecksum(raw: string, what: string): { algorithm: (typeof CHECKSUM_ALGORITHMS)[number]; hex: string } {
  const [name, digest, extra] = raw.trim().split(/\s+/);
  const algorithm = CHECKSUM_ALGORITHMS.find((a) => a === name?.toLowerCase());
  if (!algorithm || !digest || extra !== undefined) throw new TusError(400, `${what} ${JSON.stringify(raw)}: expected \`<${CHECKSUM_ALGORITHMS.join('|')}> <digest>\``);
  const bytes = createHash(algorithm).digest().length;
  if (new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(digest)) return { algorithm, hex: digest.toLowerCase() };
  const decoded = Buffer.from(digest, 'base64');
  if (decoded.length !== bytes) throw new TusError(400, `${what}: the ${algorithm} digest is neither hex nor base64 of ${bytes} bytes`);
  return { algorithm, hex: decoded.toString('hex') };
}

function targetOf(session: UploadSession): TusTarget {
  return JSON.parse(session.destination ?? '{}') as TusTarget;
}

function expiresHeader(session: UploadSession, now: number): string {
  // The service renews a session on every write: the expiry a client sees is one from now at least.
  return new Date(Math.max(session.expiresMs, now)).toUTCString();
}

/** The caller's live tus upload named by the URL; 404 otherwise (another user's is the same 404). */
async function sessionOf(ctx: DavContext, user: BridgeUser): Promise<UploadSession> {
  const segments = ctx.route?.rest.rawSegments ?? [];
  const id = segments.length === 1 ? segments[0] : undefined;
  const session = id === undefined ? undefined : await ctx.services.uploads.find(user.userId, id);
  if (!session || session.protocol !== 'tus') throw new TusError(404, 'no such upload');
  return session;
}

/**
 * Appends the request body at `offset` as one part; commits the file when the upload is whole.
 * Returns the headers of the 204/201 (Upload-Offset), or undefined when the client went away.
 */
async function append(ctx: DavContext, user: BridgeUser, session: UploadSession): Promise<Record<string, string> | undefined> {
  const { uploads } = ctx.services;
  const { req } = ctx;
  const type = headerValue(req.headers['content-type'])?.split(';')[0]?.trim().toLowerCase();
  if (type !== OFFSET_TYPE) throw new TusError(415, `Content-Type must be ${OFFSET_TYPE}`);
  const claimed = numberHeader(req, 'upload-offset');
  if (claimed === undefined) throw new TusError(400, 'Upload-Offset missing');
  if (uploads.isBusy(session)) throw new TusError(423, 'the upload is being committed');
  const offset = await uploads.receivedBytes(session);
  const total = session.totalBytes ?? 0;
  if (claimed !== offset) throw new TusError(409, `Upload-Offset ${claimed}: the upload is at ${offset}`, { 'Upload-Offset': String(offset) });
  const announced = numberHeader(req, 'content-length');
  if (announced === undefined && uploads.needsLength) throw new TusError(411, 'a PATCH needs a Content-Length here');
  if (announced !== undefined && offset + announced > total) throw new TusError(413, `${announced} bytes at ${offset} pass the Upload-Length ${total}`);
  const rawChecksum = headerValue(req.headers['upload-checksum']);
  const expected = rawChecksum === undefined ? undefined : parseChecksum(rawChecksum, 'Upload-Checksum');
  const hash = expected ? createHash(expected.algorithm) : undefined;
  const name = String(offset).padStart(15, '0');
  if (announced !== 0) {
    // The body's bytes (all that Upload-Length leaves when it has no Content-Length) are reserved
    // before they land: within the Upload-Length reserved at creation they cost nothing more, but
    // PATCHes racing at one offset each hold what they write (507 past the quota), and each
    // counts towards bridge.uploadMaxParts.
    let claimedBytes: number;
    try {
      const quota = await sessionQuota(ctx, user, session, targetOf(session).path);
      claimedBytes = await uploads.reserve(session, { part: { name, bytes: announced ?? total - offset } }, quota.availableBytes);
    } catch (err) {
      if (err instanceof UploadGoneError) throw new TusError(404, 'no such upload');
      throw tusLimitRefusal(err);
    }
    let stored: Awaited<ReturnType<typeof uploads.putPart>>;
    // A body without Content-Length is held to what Upload-Length leaves: else it could write
    // any amount to disk before the check after its end (and a body never ended, never answered).
    let bodyFailure: unknown;
    const body = requestBody(req, { maxBytes: total - offset, hash, onFailure: (err) => (bodyFailure ??= err) });
    try {
      stored = await uploads.putPart(session, { name, seq: offset, startByte: offset }, body, announced, ctx.signal, { claimedBytes, withinBytes: total });
    } catch (err) {
      if (err instanceof UploadGoneError) throw new TusError(404, 'no such upload');
      if (bodyFailure instanceof BodyTooLargeError) throw new TusError(413, `the body passes the Upload-Length ${total}`, { 'Upload-Offset': String(offset), Connection: 'close' });
      if (ctx.signal.aborted) {
        ctx.log.debug({ err }, 'client went away during a PATCH');
        return undefined;
      }
      throw err;
    }
    const size = stored.part.sizeBytes;
    const wrong =
      (announced !== undefined && size !== announced && `the body ended after ${size} of its ${announced} bytes`) ||
      (offset + size > total && `the body passes the Upload-Length ${total}`) ||
      (expected && hash && hash.digest('hex') !== expected.hex && 'the body does not match Upload-Checksum');
    if (wrong) {
      await uploads.removePart(session, name);
      throw new TusError(wrong === 'the body does not match Upload-Checksum' ? 460 : 400, wrong, { 'Upload-Offset': String(offset) });
    }
  } else req.resume();
  const now = await uploads.receivedBytes(session);
  if (now === total) return { ...(await commit(ctx, user, session)), 'Upload-Offset': String(now) };
  return { 'Upload-Offset': String(now) };
}

/** The whole upload into the drive, by the write path a PUT ends in (commit.ts); the session goes once the file is in. */
async function commit(ctx: DavContext, user: BridgeUser, session: UploadSession): Promise<Record<string, string>> {
  const { uploads } = ctx.services;
  const target = targetOf(session);
  try {
    return await uploads.whileAssembling(session, async () => {
      const { ordered, totalBytes } = assemblyOrder(session, await uploads.parts(session), session.totalBytes);
      let committed: CommittedWrite;
      try {
        // The mtime and checksum came with the creation's metadata; If and locks with this request.
        committed = await commitWrite(ctx, user, {
          path: target.path,
          door: 'upload',
          sizeBytes: totalBytes,
          heldBy: session,
          checksum: target.checksum,
          mtime: target.mtime,
          body: () => uploads.assembled(session, ordered),
        });
      } catch (err) {
        if (err instanceof StoreError && err.kind === 'invalid' && target.checksum !== undefined) {
          // The bytes contradict the checksum the upload was created with: no PATCH can mend that.
          await uploads.remove(session, { leased: true });
          throw new TusError(460, 'the upload does not match its checksum');
        }
        throw err;
      }
      await uploads.remove(session, { leased: true });
      return committed.headers;
    });
  } catch (err) {
    if (err instanceof UploadBusyError) throw new TusError(423, err.message);
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------

/**
 * Every tus answer carries Tus-Resumable (tus 1.0 core), a refusal made below the door too (the
 * write path's 403, 412, 423, 507; commit.ts): a client tells a tus refusal by it.
 */
function withTusResumable(handler: VerbHandler): VerbHandler {
  return async (ctx) => {
    try {
      await handler(ctx);
    } catch (err) {
      if (!(err instanceof DavStatusError) || err.headers['Tus-Resumable'] !== undefined || ctx.req.headers['tus-resumable'] === undefined) throw err;
      throw new DavStatusError(err.status, err.message, err.condition, { ...err.headers, 'Tus-Resumable': TUS_VERSION }, err.hrefs);
    }
  };
}

/** POST to a folder of the drive: a new upload into it (creation, creation-with-upload). */
export const tusCreate: VerbHandler = withTusResumable(async (ctx) => {
  const user = ctx.user();
  const { req } = ctx;
  // A POST that is no tus request is what it was before tus: not served (it never writes).
  if (req.headers['tus-resumable'] === undefined) throw new DavStatusError(405, 'POST creates tus uploads only (Tus-Resumable missing)', undefined, { Allow: 'OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK' });
  requireTusResumable(req);
  if (req.headers['upload-defer-length'] !== undefined) throw new TusError(400, 'Upload-Defer-Length is not supported: send Upload-Length');
  const length = numberHeader(req, 'upload-length');
  if (length === undefined) throw new TusError(400, 'Upload-Length missing');
  if (length > TUS_MAX_SIZE) throw new TusError(413, `Upload-Length ${length} passes Tus-Max-Size ${TUS_MAX_SIZE}`);
  const metadata = parseUploadMetadata(headerValue(req.headers['upload-metadata']));
  const filename = metadata.get('filename')?.normalize('NFC');
  if (!filename || filename === '.' || filename === '..' || /[/\\\0]/.test(filename)) throw new TusError(400, 'Upload-Metadata needs a `filename` (a name, no slashes)');
  const mtime = metadata.get('mtime');
  if (mtime !== undefined && !/^\d{1,12}(\.\d+)?$/.test(mtime)) throw new TusError(400, `mtime ${JSON.stringify(mtime)} is not unix seconds`);
  const rawChecksum = metadata.get('checksum');
  const checksum = rawChecksum === undefined ? undefined : parseChecksum(rawChecksum, 'the checksum metadata');
  if (checksum?.algorithm === 'sha256') throw new TusError(400, 'the checksum metadata takes sha1 or md5');

  const { tree, uploads } = ctx.services;
  const folder = await tree.tryStat(user, ctx.path);
  if (!folder || folder.entry.kind !== 'folder') throw new TusError(folder ? 405 : 404, 'uploads are created by a POST to a folder');
  const path = toDavPath([...ctx.path.split('/').filter(Boolean), filename]);
  // What the commit will check first, checked now too: a refused upload sends no byte.
  await checkWritable(ctx, user, { path, door: 'upload', sizeBytes: length });
  const quota = await uploadQuotaAt(ctx, user, path);

  // Upload-Length is reserved of the quota as the session is recorded, in one step: 507 when the
  // user's other uploads leave too little, 429 past bridge.uploadMaxOpenPerUser, nothing recorded.
  const target: TusTarget = { path, ...(mtime !== undefined ? { mtime } : {}), ...(checksum ? { checksum: `${checksum.algorithm.toUpperCase()}:${checksum.hex}` } : {}) };
  let session: UploadSession | undefined;
  try {
    session = await uploads.create(user.userId, randomUUID(), 'tus', { destination: JSON.stringify(target), totalBytes: length }, quota);
  } catch (err) {
    throw tusLimitRefusal(err);
  }
  if (!session) throw new TusError(500, 'could not create the upload');
  const location = `${ctx.services.absoluteBase(req)}/remote.php/dav/tus/${encodeURIComponent(user.name)}/${session.name}`;
  const headers: Record<string, string> = { 'Tus-Resumable': TUS_VERSION, Location: location, 'Upload-Expires': expiresHeader(session, Date.now()) };
  const withBody = headerValue(req.headers['content-type'])?.split(';')[0]?.trim().toLowerCase() === OFFSET_TYPE;
  if (withBody || length === 0) {
    req.headers['upload-offset'] = '0';
    if (!withBody) req.headers['content-type'] = OFFSET_TYPE;
    // A creation refused (413, 460, the commit's refusals) or left (the client went away) never
    // told the client its Location: nothing of it may stay, neither the session nor its parts.
    let appended: Record<string, string> | undefined;
    try {
      appended = await append(ctx, user, session);
    } finally {
      if (appended === undefined) await removeUnannounced(ctx, session);
    }
    if (appended === undefined) return;
    Object.assign(headers, appended, { 'Upload-Expires': headers['Upload-Expires'] });
  } else req.resume();
  sendEmpty(ctx, 201, headers);
});

/** Removes a session whose creation failed, unless its commit already removed it. */
async function removeUnannounced(ctx: DavContext, session: UploadSession): Promise<void> {
  try {
    await ctx.services.uploads.remove(session);
  } catch (err) {
    ctx.log.warn({ err }, 'could not remove a refused tus upload (its expiry will)');
  }
}

const patch: VerbHandler = async (ctx) => {
  const user = ctx.user();
  requireTusResumable(ctx.req);
  const session = await sessionOf(ctx, user);
  const headers = await append(ctx, user, session);
  if (headers === undefined) return;
  const live = await ctx.services.uploads.find(user.userId, session.name);
  if (live) headers['Upload-Expires'] = expiresHeader(live, Date.now());
  else delete headers['Upload-Expires'];
  sendEmpty(ctx, 204, { 'Tus-Resumable': TUS_VERSION, ...headers });
};

const head: VerbHandler = async (ctx) => {
  const user = ctx.user();
  requireTusResumable(ctx.req);
  const session = await sessionOf(ctx, user);
  const offset = await ctx.services.uploads.receivedBytes(session);
  // Every byte in but the session still here: the commit of the last PATCH failed (quota, the
  // store away). A resuming client takes offset = length as done and sends nothing more, so the
  // commit is tried again now; a refusal answers as it did on the PATCH, the upload kept.
  if (offset === session.totalBytes && !ctx.services.uploads.isBusy(session)) await commit(ctx, user, session);
  ctx.res.writeHead(200, {
    'Tus-Resumable': TUS_VERSION,
    'Upload-Offset': String(offset),
    'Upload-Length': String(session.totalBytes ?? 0),
    'Upload-Expires': expiresHeader(session, Date.now()),
    'Cache-Control': 'no-store',
    'Content-Length': '0',
  });
  ctx.res.end();
};

const del: VerbHandler = async (ctx) => {
  const user = ctx.user();
  requireTusResumable(ctx.req);
  const session = await sessionOf(ctx, user);
  if (ctx.services.uploads.isBusy(session)) throw new TusError(423, 'the upload is being committed');
  try {
    await ctx.services.uploads.remove(session);
  } catch (err) {
    if (err instanceof UploadBusyError) throw new TusError(423, err.message);
    throw err;
  }
  sendEmpty(ctx, 204, { 'Tus-Resumable': TUS_VERSION });
};

const options: VerbHandler = async (ctx) => {
  sendEmpty(ctx, 204, { ...TUS_OPTIONS_HEADERS, Allow: 'OPTIONS, HEAD, PATCH, DELETE' });
};

/** tus-js-client's `overridePatchMethod` (for proxies that drop PATCH): POST with `X-HTTP-Method-Override: PATCH`. */
const overridden: VerbHandler = async (ctx) => {
  if (headerValue(ctx.req.headers['x-http-method-override'])?.trim().toUpperCase() !== 'PATCH') {
    throw new TusError(405, 'an upload takes PATCH, HEAD and DELETE', { Allow: 'OPTIONS, HEAD, PATCH, DELETE' });
  }
  await patch(ctx);
};

/** The `tus` space's verbs (remote-spaces.ts): `/remote.php/dav/tus/<user>/<id>`; any other method is 405. */
export const tusHandlers: Record<string, VerbHandler> = Object.fromEntries(
  Object.entries({ PATCH: patch, POST: overridden, HEAD: head, DELETE: del, OPTIONS: options }).map(([method, handler]) => [method, withTusResumable(handler)]),
);
