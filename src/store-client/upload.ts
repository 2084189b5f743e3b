/**
 * The two-step upload: GET /api/nodes/{id}/upload for a token, then POST /upload/{token} with a
 * multipart body streamed straight from the caller's source (never buffered; a caller that holds
 * a small body whole may pass it as a Buffer). The token lives
 * only seconds, so it is fetched right before the body starts; if the store refuses it before
 * a single body byte was taken from the source, one fresh token is tried.
 */
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { StoreError } from './errors.js';
import type { StoreHttp } from './http.js';
import { parseWith, seg } from './parse.js';
import { uploadTokenSchema } from './schemas.js';
import type { NodeId, StoreSession, UploadResult, UploadTarget } from './types.js';

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
}

function multipart(name: string, source: Readable | Buffer, sizeBytes?: number): MultipartBody {
  const boundary = `----driveway-${randomBytes(16).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: ${dispositionFor(name)}\r\nContent-Type: application/octet-stream\r\n\r\n`, 'utf8');
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8');
  let started = false;
  async function* iterate(): AsyncGenerator<Buffer> {
    yield head;
    if (Buffer.isBuffer(source)) {
      // A Buffer is never used up: a refused token can be retried with the same bytes.
      yield source;
      yield tail;
      return;
    }
    for await (const chunk of source) {
      started = true;
      yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    }
    yield tail;
  }
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    iterable: iterate(),
    length: Buffer.isBuffer(source) ? head.length + source.length + tail.length : sizeBytes === undefined ? undefined : head.length + sizeBytes + tail.length,
    started: () => started,
  };
}

export async function uploadWithToken(
  http: StoreHttp,
  token: string,
  name: string,
  source: Readable | Buffer,
  sizeBytes?: number,
  signal?: AbortSignal,
): Promise<UploadResult> {
  const result = await sendMultipart(http, token, name, source, sizeBytes, signal);
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
): Promise<UploadResult | (StoreError & { untouched?: boolean })> {
  const operation = 'upload.send';
  const body = multipart(name, source, sizeBytes);
  const headers: Record<string, string> = { 'content-type': body.contentType };
  if (body.length !== undefined) headers['content-length'] = String(body.length);
  let res;
  try {
    res = await http.stream(
      { method: 'POST', path: `/upload/${seg(token)}`, headers, body: body.iterable as unknown as Readable, signal },
      operation,
      (status) => status >= 200 && status < 300,
    );
  } catch (err) {
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
  const envelope = parsed as { status?: unknown; msg?: unknown; data?: { uuid?: unknown; revision?: unknown; size?: unknown } } | undefined;
  if (envelope?.status === 'error') {
    return new StoreError('invalid', operation, res.status, typeof envelope.msg === 'string' ? envelope.msg : undefined);
  }
  const data = envelope?.data;
  return {
    id: typeof data?.uuid === 'string' ? (data.uuid as NodeId) : undefined,
    revision: typeof data?.revision === 'number' ? data.revision : undefined,
    sizeBytes: typeof data?.size === 'number' ? data.size : undefined,
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
): Promise<UploadResult> {
  const node = 'folder' in target ? target.folder : target.revisionOf;
  for (let attempt = 0; ; attempt += 1) {
    const token = await requestUploadToken(http, s, node, signal);
    const result = await sendMultipart(http, token, target.name, source, sizeBytes, signal);
    if (!(result instanceof StoreError)) return result;
    const retry = result.kind === 'upload-token-expired' && result.untouched === true && attempt === 0;
    if (!retry) throw result;
  }
}
