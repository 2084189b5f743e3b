/**
 * Bodies for upload tests, generated as streams so large ones never sit in memory: a
 * deterministic byte pattern (so content can be checked by hash), and hand-made multipart
 * bodies for the requests a well-behaved client would never send.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { Readable } from 'node:stream';
import { request } from 'undici';

export const MiB = 1024 * 1024;

/** The pattern repeats with a period that is not a power of two, so no two MiB chunks are alike. */
const PERIOD = 65_521;
const BLOCK = (() => {
  const block = Buffer.allocUnsafe(PERIOD * 2);
  let x = 0x9e3779b9;
  for (let i = 0; i < PERIOD; i += 1) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    block[i] = x & 0xff;
  }
  block.copy(block, PERIOD, 0, PERIOD);
  return block;
})();

/** Byte i of the pattern depends on i alone, so any slice can be recomputed. */
export function patternBytes(offset: number, length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  let written = 0;
  while (written < length) {
    const start = (offset + written) % PERIOD;
    written += BLOCK.copy(out, written, start, start + Math.min(PERIOD, length - written));
  }
  return out;
}

/**
 * `totalBytes` of the pattern in chunks of `chunkBytes` (1 MiB by default), produced only as
 * fast as they are read; `onChunk` sees how far the reader has got.
 */
export function patternStream(totalBytes: number, options: { chunkBytes?: number; onChunk?: (producedBytes: number) => void } = {}): Readable {
  const chunkBytes = options.chunkBytes ?? MiB;
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= totalBytes) {
        this.push(null);
        return;
      }
      const length = Math.min(chunkBytes, totalBytes - sent);
      const chunk = patternBytes(sent, length);
      sent += length;
      options.onChunk?.(sent);
      this.push(chunk);
    },
  });
}

/** Hex digest of `totalBytes` of the pattern, computed chunk by chunk (SHA-256 unless given a hasher). */
export function patternHash(
  totalBytes: number,
  hash: { update(data: Buffer): unknown; digest(encoding: 'hex'): string } = createHash('sha256'),
  chunkBytes = MiB,
): string {
  for (let offset = 0; offset < totalBytes; offset += chunkBytes) hash.update(patternBytes(offset, Math.min(chunkBytes, totalBytes - offset)));
  return hash.digest('hex');
}

export interface MultipartOptions {
  /** Raw `filename="..."` value, written as given (UTF-8); omitted when undefined. */
  filename?: string;
  fieldName?: string;
  /** Text fields sent before the file part. */
  fieldsBefore?: Record<string, string>;
  /** Leave out the file part entirely. */
  withoutFile?: boolean;
}

/** A multipart/form-data body around `content`, streamed; the boundary is random. */
export function multipartStream(content: Readable | Buffer | string, options: MultipartOptions = {}): { contentType: string; body: Readable } {
  const boundary = `----test-${randomBytes(12).toString('hex')}`;
  const fieldName = options.fieldName ?? 'file';
  async function* parts(): AsyncGenerator<Buffer> {
    for (const [name, value] of Object.entries(options.fieldsBefore ?? {})) {
      yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`, 'utf8');
    }
    if (!options.withoutFile) {
      const filename = options.filename === undefined ? '' : `; filename="${options.filename}"`;
      yield Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${fieldName}"${filename}\r\nContent-Type: application/octet-stream\r\n\r\n`,
        'utf8',
      );
      if (typeof content === 'string' || Buffer.isBuffer(content)) yield Buffer.from(content);
      else for await (const chunk of content) yield chunk as Buffer;
      yield Buffer.from('\r\n', 'utf8');
    }
    yield Buffer.from(`--${boundary}--\r\n`, 'utf8');
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Readable.from(parts(), { objectMode: false }) };
}

/** Collects a stream into one buffer (small bodies only). */
export async function readAll(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** Names in a folder; [] when it does not exist. */
export function filesIn(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * Starts a streamed upload (POST /upload/{token}) of a body that never ends in practice (4 GiB),
 * for a test that interrupts it: resolves with the answer or the error, never throws.
 */
export function startEndlessUpload(baseUrl: string, token: string, signal?: AbortSignal): Promise<unknown> {
  const { contentType, body } = multipartStream(patternStream(4096 * MiB), { filename: 'interrupted.bin' });
  return request(`${baseUrl}/upload/${token}`, { method: 'POST', body, headers: { 'content-type': contentType }, signal }).then(
    async (res) => ({ status: res.statusCode, body: await res.body.text() }),
    (err: unknown) => err,
  );
}
