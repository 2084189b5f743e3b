/**
 * SHA-1 and MD5 of large uploads on worker threads (issue 22): on the request's thread they
 * doubled the CPU of a 1 GiB PUT (MD5 has no CPU instructions of its own; 2.1 → 4.2 s, 370 →
 * 205 MiB/s through `node dist/main.js`), while BLAKE3 and the socket and file work already
 * fill that thread. Here they run beside it on another core, fed the same chunks.
 *
 * - Chunks are gathered into 1 MiB batches (one copy) whose memory is transferred, not cloned,
 *   so a GiB costs ~1,000 messages. At most 8 MiB per stream is in flight: past that, `ready()`
 *   makes the caller wait (staging then stops reading the body: backpressure, bounded memory).
 * - A small pool (cores - 1, at least 1, at most 4), lazily started and unref'd; a stream keeps
 *   one worker. A worker that dies fails its streams (the upload fails, nothing is recorded)
 *   and is replaced at the next use.
 * - The worker is a few lines of plain JavaScript evaluated as a script, so the same code runs
 *   under node, tsx and vitest without a separate build artefact.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const streams = new Map();
parentPort.on('message', (m) => {
  let s = streams.get(m.id);
  if (m.type === 'drop') { streams.delete(m.id); return; }
  if (!s) { s = { sha1: createHash('sha1'), md5: createHash('md5') }; streams.set(m.id, s); }
  if (m.type === 'chunk') {
    const bytes = new Uint8Array(m.bytes);
    s.sha1.update(bytes);
    s.md5.update(bytes);
    parentPort.postMessage({ type: 'ack', id: m.id, bytes: bytes.length });
  } else if (m.type === 'end') {
    streams.delete(m.id);
    parentPort.postMessage({ type: 'digest', id: m.id, sha1: s.sha1.digest('hex'), md5: s.md5.digest('hex') });
  }
});
`;

const BATCH_BYTES = 1024 * 1024;
const MAX_IN_FLIGHT_BYTES = 8 * 1024 * 1024;

type WorkerMessage = { type: 'ack'; id: number; bytes: number } | { type: 'digest'; id: number; sha1: string; md5: string };

interface PooledWorker {
  worker: Worker;
  streams: Map<number, OffThreadChecksums>;
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

/** SHA-1 and MD5 of one stream of chunks, computed on a worker thread. */
export class OffThreadChecksums {
  private readonly id = nextStream++;
  private readonly pooled = workerFor();
  private batch: Buffer[] = [];
  private batchBytes = 0;
  private inFlight = 0;
  private error: Error | undefined;
  private waiters: Array<() => void> = [];
  private result: ((sums: { sha1: string; md5: string } | Error) => void) | undefined;

  constructor() {
    this.pooled.streams.set(this.id, this);
  }

  /** Adds a chunk (the caller may reuse nothing: chunks are copied into the next batch). */
  update(chunk: Buffer): void {
    if (this.error) throw this.error;
    this.batch.push(chunk);
    this.batchBytes += chunk.length;
    if (this.batchBytes >= BATCH_BYTES) this.flush();
  }

  /** Whether the caller should wait for ready() before the next chunk. */
  get isBusy(): boolean {
    return this.inFlight >= MAX_IN_FLIGHT_BYTES;
  }

  /** Resolves once less than the in-flight bound is queued (rejects when the worker failed). */
  ready(): Promise<void> {
    if (this.error) return Promise.reject(this.error);
    if (!this.isBusy) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push(() => (this.error ? reject(this.error) : resolve())));
  }

  /** The checksums of every chunk given. */
  digest(): Promise<{ sha1: string; md5: string }> {
    if (this.error) return Promise.reject(this.error);
    this.flush();
    return new Promise((resolve, reject) => {
      this.result = (sums) => (sums instanceof Error ? reject(sums) : resolve(sums));
      this.pooled.worker.postMessage({ type: 'end', id: this.id });
    });
  }

  /** Forgets the stream (an upload that failed). */
  abort(): void {
    this.pooled.streams.delete(this.id);
    if (!this.pooled.failed) this.pooled.worker.postMessage({ type: 'drop', id: this.id });
  }

  /** @internal the pool's dispatch. */
  receive(message: WorkerMessage): void {
    if (message.type === 'ack') {
      this.inFlight -= message.bytes;
      if (!this.isBusy) for (const wake of this.waiters.splice(0)) wake();
      return;
    }
    this.pooled.streams.delete(this.id);
    this.result?.({ sha1: message.sha1, md5: message.md5 });
  }

  /** @internal the worker died. */
  fail(err: Error): void {
    this.error = err;
    for (const wake of this.waiters.splice(0)) wake();
    this.result?.(err);
  }

  private flush(): void {
    if (this.batchBytes === 0) return;
    // One copy into memory of its own, handed over to the worker without another.
    const bytes = new Uint8Array(this.batchBytes);
    let offset = 0;
    for (const chunk of this.batch) {
      bytes.set(chunk, offset);
      offset += chunk.length;
    }
    this.inFlight += this.batchBytes;
    this.batch = [];
    this.batchBytes = 0;
    this.pooled.worker.postMessage({ type: 'chunk', id: this.id, bytes: bytes.buffer }, [bytes.buffer]);
  }
}
