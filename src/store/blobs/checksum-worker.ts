/**
 * SHA-1 and MD5 of large uploads on worker threads (issue 22): on the request's thread they
 * doubled the CPU of a 1 GiB PUT (MD5 has no CPU instructions of its own; 2.1 → 4.2 s, 370 →
 * 205 MiB/s through `node dist/main.js`), while BLAKE3 and the socket and file work already
 * fill that thread. Here they run beside it on another core.
 *
 * The worker follows the staged part as it grows: staging tells it how far the file has been
 * written (`advance`), and it reads those bytes back from the page cache they were just written
 * to (never from the disk: nothing has been flushed yet) while the body is still arriving. An
 * earlier version fed it copies of the body's chunks through postMessage; that cost the request's
 * thread a copy of every byte and the garbage collector 1,024 transferred MiB per GiB (main +
 * GC threads 2.1 → 2.5 s of CPU per GiB), and its in-flight bound held the body to the worker's
 * pace (MD5, ~820 MiB/s here) whenever the worker had no core to itself. Following the file, the
 * body is written at its own pace and the worker catches up while the part is fsynced; memory
 * stays one 1 MiB read buffer per worker, however far behind it is.
 *
 * - A small pool (cores - 1, at least 1, at most 4), lazily started and unref'd; a stream keeps
 *   one worker. A worker that dies fails its streams (the upload fails, nothing is recorded)
 *   and is replaced at the next use. A part that turns out shorter than staging said (removed
 *   or cut behind our back) fails its stream, never hangs it.
 * - The worker is a few lines of plain JavaScript evaluated as a script, so the same code runs
 *   under node, tsx and vitest without a separate build artefact.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const buffer = Buffer.allocUnsafe(1 << 20);
const streams = new Map();
function close(id, s) {
  streams.delete(id);
  if (s.fd !== undefined) { try { fs.closeSync(s.fd); } catch {} }
}
function pump(id, s) {
  try {
    if (s.fd === undefined) s.fd = fs.openSync(s.path, 'r');
    while (s.position < s.upto) {
      const n = fs.readSync(s.fd, buffer, 0, Math.min(buffer.length, s.upto - s.position), s.position);
      if (n === 0) throw new Error('the staged part ended at ' + s.position + ' bytes, before the ' + s.upto + ' written to it');
      const bytes = buffer.subarray(0, n);
      s.sha1.update(bytes);
      s.md5.update(bytes);
      s.position += n;
    }
    if (s.ended) {
      close(id, s);
      parentPort.postMessage({ type: 'digest', id, sha1: s.sha1.digest('hex'), md5: s.md5.digest('hex') });
    }
  } catch (err) {
    close(id, s);
    parentPort.postMessage({ type: 'error', id, message: String(err && err.message || err) });
  }
}
parentPort.on('message', (m) => {
  if (m.type === 'open') {
    streams.set(m.id, { path: m.path, fd: undefined, position: 0, upto: 0, ended: false, sha1: createHash('sha1'), md5: createHash('md5') });
    return;
  }
  const s = streams.get(m.id);
  if (!s) return;
  if (m.type === 'drop') { close(m.id, s); return; }
  s.upto = Math.max(s.upto, m.bytes);
  if (m.type === 'end') { s.upto = m.bytes; s.ended = true; }
  pump(m.id, s);
});
`;

/** How far the file must have grown since the last word to the worker before it hears again. */
const ADVANCE_STEP_BYTES = 1024 * 1024;

type WorkerMessage = { type: 'digest'; id: number; sha1: string; md5: string } | { type: 'error'; id: number; message: string };

interface PooledWorker {
  worker: Worker;
  streams: Map<number, FileChecksums>;
  failed: Error | undefined;
}

const pool: Array<PooledWorker | undefined> = [];
let nextStream = 1;
let nextWorker = 0;

function poolSize(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

function startWorker(slot: number): PooledWorker {
  const pooled: PooledWorker = { worker: new Worker(WORKER_SOURCE, { eval: true }), streams: new Map(), failed: undefined };
  pooled.worker.unref();
  pooled.worker.on('message', (message: WorkerMessage) => pooled.streams.get(message.id)?.receive(message));
  const fail = (err: Error): void => {
    pooled.failed = err;
    if (pool[slot] === pooled) pool[slot] = undefined;
    for (const stream of pooled.streams.values()) stream.fail(err);
    pooled.streams.clear();
  };
  pooled.worker.on('error', fail);
  pooled.worker.on('exit', (code) => fail(new Error(`the checksum worker exited (code ${code})`)));
  return pooled;
}

function workerFor(): PooledWorker {
  const slot = nextWorker++ % poolSize();
  let pooled = pool[slot];
  if (!pooled || pooled.failed) {
    pooled = startWorker(slot);
    pool[slot] = pooled;
  }
  return pooled;
}

/** SHA-1 and MD5 of a file being written, computed on a worker thread that follows its growth. */
export class FileChecksums {
  private readonly id = nextStream++;
  private readonly pooled = workerFor();
  private told = 0;
  private error: Error | undefined;
  private result: ((sums: { sha1: string; md5: string } | Error) => void) | undefined;

  /** `file` exists (it may be empty) and is only ever appended to until digest(). */
  constructor(file: string) {
    this.pooled.streams.set(this.id, this);
    this.pooled.worker.postMessage({ type: 'open', id: this.id, path: file });
  }

  /** The file's first `bytes` bytes are written (their write calls have returned). */
  advance(bytes: number): void {
    if (this.error || bytes - this.told < ADVANCE_STEP_BYTES) return;
    this.told = bytes;
    this.pooled.worker.postMessage({ type: 'advance', id: this.id, bytes });
  }

  /** The checksums of the file's first `totalBytes` bytes, its whole content. */
  digest(totalBytes: number): Promise<{ sha1: string; md5: string }> {
    if (this.error) return Promise.reject(this.error);
    return new Promise((resolve, reject) => {
      this.result = (sums) => (sums instanceof Error ? reject(sums) : resolve(sums));
      this.pooled.worker.postMessage({ type: 'end', id: this.id, bytes: totalBytes });
    });
  }

  /** Forgets the stream (an upload that failed); the worker closes the file. */
  abort(): void {
    this.pooled.streams.delete(this.id);
    if (!this.pooled.failed) this.pooled.worker.postMessage({ type: 'drop', id: this.id });
  }

  /** @internal the pool's dispatch. */
  receive(message: WorkerMessage): void {
    this.pooled.streams.delete(this.id);
    if (message.type === 'error') this.fail(new Error(`checksums of a staged part: ${message.message}`));
    else this.result?.({ sha1: message.sha1, md5: message.md5 });
  }

  /** @internal the worker died, or could not read the file. */
  fail(err: Error): void {
    this.error = err;
    this.result?.(err);
  }
}
