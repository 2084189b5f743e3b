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
 * - MD5 later (issue 32): from deferMd5() on, the stream's answer waits for SHA-1 alone and the
 *   worker computes MD5 in the background, a 1 MiB read at a time between messages, through the
 *   descriptor it holds (a rename or unlink of the part does not disturb it); later() gives it.
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
let backgroundScheduled = false;
function close(id, s) {
  streams.delete(id);
  if (s.fd !== undefined) { try { fs.closeSync(s.fd); } catch {} }
}
function readAt(s, position, upto) {
  if (s.fd === undefined) s.fd = fs.openSync(s.path, 'r');
  const n = fs.readSync(s.fd, buffer, 0, Math.min(buffer.length, upto - position), position);
  if (n === 0) throw new Error('the staged part ended at ' + position + ' bytes, before the ' + upto + ' written to it');
  return buffer.subarray(0, n);
}
function fail(id, s, err) {
  close(id, s);
  parentPort.postMessage({ type: 'error', id, message: String(err && err.message || err) });
}
function finishMd5(id, s) {
  close(id, s);
  parentPort.postMessage({ type: 'md5', id, md5: s.md5.digest('hex') });
}
// The foreground: SHA-1 (and MD5 with it, unless MD5 comes later) as far as the file is written.
function pump(id, s) {
  try {
    while (s.p1 < s.upto) {
      const bytes = readAt(s, s.p1, s.upto);
      s.sha1.update(bytes);
      if (!s.md5Later) { s.md5.update(bytes); s.pm += bytes.length; }
      s.p1 += bytes.length;
    }
    if (s.ended && !s.sha1Sent) {
      s.sha1Sent = true;
      parentPort.postMessage({ type: 'sha1', id, sha1: s.sha1.digest('hex'), md5: s.md5Later ? undefined : s.md5.digest('hex') });
      if (!s.md5Later) { close(id, s); return; }
      if (s.pm === s.upto) finishMd5(id, s);
    }
  } catch (err) {
    fail(id, s, err);
  }
  scheduleBackground();
}
// The background: MD5 of the streams that take it later, one read at a time between messages.
function scheduleBackground() {
  if (backgroundScheduled) return;
  for (const s of streams.values()) {
    if (s.md5Later && s.pm < s.upto) { backgroundScheduled = true; setImmediate(background); return; }
  }
}
function background() {
  backgroundScheduled = false;
  for (const [id, s] of streams) {
    if (!s.md5Later || s.pm >= s.upto) continue;
    try {
      const bytes = readAt(s, s.pm, s.upto);
      s.md5.update(bytes);
      s.pm += bytes.length;
      if (s.sha1Sent && s.pm === s.upto) finishMd5(id, s);
    } catch (err) {
      fail(id, s, err);
    }
    break;
  }
  scheduleBackground();
}
parentPort.on('message', (m) => {
  if (m.type === 'open') {
    streams.set(m.id, { path: m.path, fd: undefined, p1: 0, pm: 0, upto: 0, ended: false, sha1Sent: false, md5Later: m.md5Later === true, sha1: createHash('sha1'), md5: createHash('md5') });
    return;
  }
  const s = streams.get(m.id);
  if (!s) return;
  if (m.type === 'drop') { close(m.id, s); return; }
  if (m.type === 'later') { s.md5Later = true; return; }
  s.upto = Math.max(s.upto, m.bytes);
  if (m.type === 'end') { s.upto = m.bytes; s.ended = true; }
  pump(m.id, s);
});
`;

/** How far the file must have grown since the last word to the worker before it hears again. */
const ADVANCE_STEP_BYTES = 1024 * 1024;

type WorkerMessage =
  | { type: 'sha1'; id: number; sha1: string; md5?: string }
  | { type: 'md5'; id: number; md5: string }
  | { type: 'error'; id: number; message: string };

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

/** An MD5 computed after the upload's answer (staging's `md5Later`); cancel() drops it. */
export interface LaterMd5 {
  /** The MD5 (hex); rejects when the worker could not finish it (a part cut, a worker gone, cancel()). */
  readonly md5: Promise<string>;
  cancel(): void;
}

/**
 * SHA-1 and MD5 of a file being written, computed on a worker thread that follows its growth.
 * With `md5Later`, digest() answers with SHA-1 alone once it is known, and the worker goes on
 * with MD5 in the background (between other streams' work), reading the file through its open
 * descriptor: a rename of the file into the blob store does not disturb it.
 */
export class FileChecksums {
  private readonly id = nextStream++;
  private readonly pooled = workerFor();
  private told = 0;
  private error: Error | undefined;
  private result: ((sums: { sha1: string; md5?: string } | Error) => void) | undefined;
  private sha1Known = false;
  private laterMd5: { promise: Promise<string>; settle: (md5: string | Error) => void } | undefined;

  /** `file` exists (it may be empty) and is only ever appended to until digest(). */
  constructor(file: string) {
    this.pooled.streams.set(this.id, this);
    this.pooled.worker.postMessage({ type: 'open', id: this.id, path: file });
  }

  /**
   * From now on MD5 comes later: digest() answers with SHA-1 alone, and later() gives the MD5,
   * which the worker computes from where it stands when it has no SHA-1 to do.
   */
  deferMd5(): void {
    if (this.laterMd5 || this.error) return;
    let settle: (md5: string | Error) => void = () => undefined;
    const promise = new Promise<string>((resolve, reject) => {
      settle = (md5) => (md5 instanceof Error ? reject(md5) : resolve(md5));
    });
    // Whoever waits for it hears of a failure; nobody waiting is no unhandled rejection.
    promise.catch(() => undefined);
    this.laterMd5 = { promise, settle };
    this.pooled.worker.postMessage({ type: 'later', id: this.id });
  }

  /** The file's first `bytes` bytes are written (their write calls have returned). */
  advance(bytes: number): void {
    if (this.error || bytes - this.told < ADVANCE_STEP_BYTES) return;
    this.told = bytes;
    this.pooled.worker.postMessage({ type: 'advance', id: this.id, bytes });
  }

  /** The checksums of the file's first `totalBytes` bytes, its whole content; no `md5` when it comes later. */
  digest(totalBytes: number): Promise<{ sha1: string; md5?: string }> {
    if (this.error) return Promise.reject(this.error);
    return new Promise((resolve, reject) => {
      this.result = (sums) => (sums instanceof Error ? reject(sums) : resolve(sums));
      this.pooled.worker.postMessage({ type: 'end', id: this.id, bytes: totalBytes });
    });
  }

  /** digest() of a stream whose MD5 was never deferred: both. */
  async digestBoth(totalBytes: number): Promise<{ sha1: string; md5: string }> {
    const { sha1, md5 } = await this.digest(totalBytes);
    if (md5 === undefined) throw new Error('the MD5 of this stream was deferred');
    return { sha1, md5 };
  }

  /** The MD5 that comes after digest() (constructed with `md5Later`). */
  later(): LaterMd5 | undefined {
    const laterMd5 = this.laterMd5;
    if (!laterMd5) return undefined;
    return { md5: laterMd5.promise, cancel: () => this.abort() };
  }

  /** Forgets the stream (an upload that failed, an MD5 no longer wanted); the worker closes the file. */
  abort(): void {
    if (!this.pooled.streams.delete(this.id)) return;
    this.laterMd5?.settle(new Error('the checksum stream was dropped'));
    if (!this.pooled.failed) this.pooled.worker.postMessage({ type: 'drop', id: this.id });
  }

  /** @internal the pool's dispatch. */
  receive(message: WorkerMessage): void {
    if (message.type === 'error') {
      this.pooled.streams.delete(this.id);
      this.error = new Error(`checksums of a staged part: ${message.message}`);
      this.fail(this.error);
    } else if (message.type === 'sha1') {
      this.sha1Known = true;
      if (!this.laterMd5) this.pooled.streams.delete(this.id);
      this.result?.(message.md5 === undefined ? { sha1: message.sha1 } : { sha1: message.sha1, md5: message.md5 });
    } else {
      this.pooled.streams.delete(this.id);
      this.laterMd5?.settle(message.md5);
    }
  }

  /** @internal the worker died, or could not read the file. */
  fail(err: Error): void {
    this.error = err;
    if (!this.sha1Known) this.result?.(err);
    this.laterMd5?.settle(err);
  }
}
