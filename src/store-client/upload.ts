/**
 * The two-step upload: GET /api/nodes/{id}/upload for a token, then POST /upload/{token} with a
 * multipart body streamed straight from the caller's source (never buffered; a caller that holds
 * a small body whole may pass it as a Buffer). The token lives
 * only seconds, so it is fetched right before the body starts; if the store refuses it before
 * a single body byte was taken from the source, one fresh token is tried.
 *
 * A client's OC-Checksum claim (UploadOptions.checksum) goes to the store as the `OC-Checksum`
 * header, which driveway's store verifies before it records anything. A foreign store may
 * ignore it, so the claim is also checked here while the bytes pass: on a mismatch the body
 * stops before the multipart's closing boundary, the store never receives a complete upload
 * (SPEC: a revision exists only once its bytes are complete) and the upload fails with
 * `checksum_mismatch`. Hashing costs the bridge CPU only for uploads that carry a claim.
 */
import { createHash, randomBytes, type Hash } from 'node:crypto';
import { knownOcChecksums, ocChecksumMismatch, parseOcChecksum } from '../common/oc-checksum.js';
import type { Readable } from 'node:stream';
import { StoreError } from './errors.js';
import type { StoreHttp } from './http.js';
import { parseWith, seg } from './parse.js';
import { uploadTokenSchema } from './schemas.js';
import type { NodeId, StoreSession, UploadOptions, UploadResult, UploadTarget } from './types.js';

/** Hashes the claimed algorithms of a body as it passes; `mismatch()` after its last byte. */
class ClaimCheck {
  private readonly sha1: Hash | undefined;
  private readonly md5: Hash | undefined;
  constructor(private readonly claim: string) {
    const algorithms = new Set(knownOcChecksums(parseOcChecksum(claim)).map((e) => e.algorithm));
    this.sha1 = algorithms.has('SHA1') ? createHash('sha1') : undefined;
    this.md5 = algorithms.has('MD5') ? createHash('md5') : undefined;
  }
  update(chunk: Buffer): void {
    this.sha1?.update(chunk);
    this.md5?.update(chunk);
  }
  mismatch(): string | undefined {
    const wrong = ocChecksumMismatch(this.claim, { sha1: this.sha1?.digest('hex') ?? null, md5: this.md5?.digest('hex') ?? null });
    return wrong?.algorithm;
  }
}

function checksumMismatch(algorithm: string): StoreError {
  return new StoreError('invalid', 'upload.send', 400, `the content does not match its OC-Checksum ${algorithm}`, { code: 'checksum_mismatch' });
}

export async function requestUploadToken(http: StoreHttp, s: StoreSession, target: NodeId, signal?: AbortSignal): Promise<string> {
  const operation = 'upload.requestToken';
  const res = await http.call({ method: 'GET', path: `/api/nodes/${seg(target)}/upload`, token: s.token, signal }, operation);
  return parseWith(uploadTokenSchema, res.body, operation, res.status).token;
}

/** Content-Disposition parameters for a file part: quoted UTF-8 for everyone, RFC 5987 form for parsers that know it. */
function dispositionFor(name: string): string {
  const quoted = name.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
  const extended = encodeURIComponent(name).replace(/['()*!]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `form-data; name="file"; filename="${quoted}"; filename*=UTF-8''${extended}`;
}

interface MultipartBody {
  contentType: string;
  iterable: AsyncIterable<Buffer>;
  length?: number;
  /** True once a byte of the caller's source stream was consumed (a Buffer can always be sent again). */
  started(): boolean;
  /** The algorithm the body contradicted, once the body was cut short for it. */
  mismatch(): string | undefined;
}

function multipart(name: string, source: Readable | Buffer, sizeBytes?: number, claim?: string): MultipartBody {
  const boundary = `----driveway-${randomBytes(16).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: ${dispositionFor(name)}\r\nContent-Type: application/octet-stream\r\n\r\n`, 'utf8');
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8');
  let started = false;
  let mismatch: string | undefined;
  const check = claim === undefined ? undefined : new ClaimCheck(claim);
  /** Ends the body without its closing boundary when the bytes contradict the claim. */
  function verified(): void {
    mismatch = check?.mismatch();
    if (mismatch !== undefined) throw checksumMismatch(mismatch);
  }
  async function* iterate(): AsyncGenerator<Buffer> {
    yield head;
    if (Buffer.isBuffer(source)) {
      // A Buffer is never used up: a refused token can be retried with the same bytes.
      check?.update(source);
      verified();
      yield source;
      yield tail;
      return;
    }
    for await (const chunk of source) {
      started = true;
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      check?.update(bytes);
      yield bytes;
    }
    verified();
    yield tail;
  }
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    iterable: iterate(),
    length: Buffer.isBuffer(source) ? head.length + source.length + tail.length : sizeBytes === undefined ? undefined : head.length + sizeBytes + tail.length,
    started: () => started,
    mismatch: () => mismatch,
  };
}

export async function uploadWithToken(
  http: StoreHttp,
  token: string,
  name: string,
  source: Readable | Buffer,
  sizeBytes?: number,
  signal?: AbortSignal,
  options: UploadOptions = {},
): Promise<UploadResult> {
  const result = await sendMultipart(http, token, name, source, sizeBytes, signal, options.checksum);
  if (result instanceof StoreError) throw result;
  return result;
}

async function sendMultipart(
  http: StoreHttp,
  token: string,
  name: string,
  source: Readable | Buffer,
  sizeBytes: number | undefined,
  signal: AbortSignal | undefined,
  claim?: string,
): Promise<UploadResult | (StoreError & { untouched?: boolean })> {
  const operation = 'upload.send';
  const body = multipart(name, source, sizeBytes, claim);
  const headers: Record<string, string> = { 'content-type': body.contentType };
  if (claim !== undefined) headers['oc-checksum'] = claim;
  if (body.length !== undefined) headers['content-length'] = String(body.length);
  let res;
  try {
    res = await http.stream(
      { method: 'POST', path: `/upload/${seg(token)}`, headers, body: body.iterable as unknown as Readable, signal },
      operation,
      (status) => status >= 200 && status < 300,
    );
  } catch (err) {
    // Whatever the transport made of a body cut short for its checksum, that is the cause.
    const mismatch = body.mismatch();
    if (mismatch !== undefined) return checksumMismatch(mismatch);
    if (err instanceof StoreError) return Object.assign(err, { untouched: !body.started() });
    throw err;
  }
  const text = await new Response(res.body as unknown as ReadableStream).text().catch(() => '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    parsed = undefined;
  }
  const envelope = parsed as { status?: unknown; msg?: unknown; data?: { uuid?: unknown; revision?: unknown; size?: unknown; checksums?: unknown; file_id?: unknown } } | undefined;
  if (envelope?.status === 'error') {
    return new StoreError('invalid', operation, res.status, typeof envelope.msg === 'string' ? envelope.msg : undefined);
  }
  const data = envelope?.data;
  const sums = data?.checksums as { sha1?: unknown; md5?: unknown } | undefined;
  // MD5 may come after the answer (a large upload): SHA-1 alone is published then.
  const md5 = typeof sums?.md5 === 'string' && /^[0-9a-fA-F]{32}$/.test(sums.md5) ? sums.md5.toLowerCase() : undefined;
  const checksums =
    typeof sums?.sha1 === 'string' && /^[0-9a-fA-F]{40}$/.test(sums.sha1) ? { sha1: sums.sha1.toLowerCase(), ...(md5 === undefined ? {} : { md5 }) } : undefined;
  return {
    id: typeof data?.uuid === 'string' ? (data.uuid as NodeId) : undefined,
    revision: typeof data?.revision === 'number' ? data.revision : undefined,
    sizeBytes: typeof data?.size === 'number' ? data.size : undefined,
    ...(checksums ? { checksums } : {}),
    ...(Number.isSafeInteger(data?.file_id) && (data?.file_id as number) > 0 ? { fileId: data?.file_id as number } : {}),
  };
}

/** Both steps. `sizeBytes`, when known, is sent as Content-Length so any server can take the body. */
export async function upload(
  http: StoreHttp,
  s: StoreSession,
  target: UploadTarget,
  source: Readable | Buffer,
  sizeBytes?: number,
  signal?: AbortSignal,
  options: UploadOptions = {},
): Promise<UploadResult> {
  const node = 'folder' in target ? target.folder : target.revisionOf;
  for (let attempt = 0; ; attempt += 1) {
    const token = await requestUploadToken(http, s, node, signal);
    const result = await sendMultipart(http, token, target.name, source, sizeBytes, signal, options.checksum);
    if (!(result instanceof StoreError)) return result;
    const retry = result.kind === 'upload-token-expired' && result.untouched === true && attempt === 0;
    if (!retry) throw result;
  }
}
