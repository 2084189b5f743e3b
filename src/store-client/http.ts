/**
 * The single request path of the store client: base URL, bearer token, timeouts, bounded
 * retries with jitter for idempotent requests, decoding into StoreError, and URL redaction in
 * every log line and error. Nothing else in store-client talks to undici directly.
 */
import type { Readable } from 'node:stream';
import { Agent, errors as undiciErrors, request, type Dispatcher } from 'undici';
import type { Logger } from '../common/logger.js';
import { redactUrl } from '../common/logger.js';
import { classify, StoreError } from './errors.js';

export interface HttpOptions {
  /** Timeout for a JSON call, and for the response headers of a streamed one. */
  timeoutMs?: number;
  /** Longest pause between two body chunks of a stream. */
  bodyTimeoutMs?: number;
  /** Retries for idempotent calls that failed with `unavailable`. */
  retries?: number;
  connections?: number;
  logger?: Logger;
  dispatcher?: Dispatcher;
}

export interface RawRequest {
  method: Dispatcher.HttpMethod;
  /** Path below the base URL, already encoded, starting with `/`. */
  path: string;
  token?: string;
  json?: unknown;
  body?: Readable | Buffer | string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON when the body is JSON, else the text ('' for none). */
  body: unknown;
}

export interface StreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
}

const RETRYABLE_NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class StoreHttp {
  readonly baseUrl: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly timeoutMs: number;
  private readonly bodyTimeoutMs: number;
  private readonly retries: number;
  private readonly log?: Logger;

  constructor(baseUrl: string, options: HttpOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.bodyTimeoutMs = options.bodyTimeoutMs ?? 300_000;
    this.retries = options.retries ?? 2;
    this.log = options.logger;
    this.ownsDispatcher = !options.dispatcher;
    this.dispatcher =
      options.dispatcher ??
      new Agent({
        connections: options.connections ?? 32,
        keepAliveTimeout: 10_000,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.bodyTimeoutMs,
      });
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private headersFor(req: RawRequest): Record<string, string> {
    const headers: Record<string, string> = { ...req.headers };
    if (req.token) headers.authorization = `Bearer ${req.token}`;
    if (req.json !== undefined) headers['content-type'] = 'application/json';
    return headers;
  }

  /** Sends a request and returns the raw status, headers and parsed body; throws StoreError only for network failures. */
  async requestRaw(req: RawRequest, operation = 'http.request'): Promise<RawResponse> {
    // Only reads are repeated: a repeated DELETE would purge from trash what the first one trashed.
    const isIdempotent = req.method === 'GET' || req.method === 'HEAD';
    const isReplayable = req.body === undefined || typeof req.body === 'string' || Buffer.isBuffer(req.body);
    for (let attempt = 0; ; attempt += 1) {
      const started = performance.now();
      try {
        const timeout = AbortSignal.timeout(this.timeoutMs);
        const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
        const res = await request(this.baseUrl + req.path, {
          method: req.method,
          headers: this.headersFor(req),
          body: req.json !== undefined ? JSON.stringify(req.json) : req.body,
          dispatcher: this.dispatcher,
          signal,
        });
        const text = await res.body.text();
        let body: unknown = text;
        const type = String(res.headers['content-type'] ?? '');
        if (text && (type.includes('json') || /^[[{]/.test(text.trimStart()))) {
          try {
            body = JSON.parse(text) as unknown;
          } catch {
            body = text;
          }
        }
        this.log?.debug({ operation, method: req.method, url: redactUrl(req.path), status: res.statusCode, ms: Math.round(performance.now() - started) }, 'store call');
        const failure = classify(operation, res.statusCode, body, res.headers);
        const retry = failure?.kind === 'unavailable' && res.statusCode !== 429 && isIdempotent && isReplayable && attempt < this.retries;
        if (retry) {
          await sleep(100 * 2 ** attempt + Math.random() * 100);
          continue;
        }
        return { status: res.statusCode, headers: res.headers, body };
      } catch (err) {
        const failure = this.networkError(operation, err, req.signal);
        const code = (err as { code?: string }).code ?? '';
        // A refused connection sent nothing, so even a POST may be repeated.
        const safe = (isIdempotent && isReplayable) || code === 'ECONNREFUSED';
        if (failure.kind === 'unavailable' && safe && attempt < this.retries && !req.signal?.aborted) {
          await sleep(100 * 2 ** attempt + Math.random() * 100);
          continue;
        }
        throw failure;
      }
    }
  }

  /** Like requestRaw, but throws the classified StoreError unless the call succeeded. */
  async call(req: RawRequest, operation: string): Promise<RawResponse> {
    const res = await this.requestRaw(req, operation);
    const failure = classify(operation, res.status, res.body, res.headers);
    if (failure) throw failure;
    return res;
  }

  /**
   * Sends a request and hands back the response body as a stream (downloads, and uploads
   * whose answer is small). Non-success answers are read, classified and thrown.
   */
  async stream(req: RawRequest, operation: string, acceptStatus: (status: number) => boolean): Promise<StreamResponse> {
    const started = performance.now();
    let res: Dispatcher.ResponseData<unknown>;
    try {
      res = await request(this.baseUrl + req.path, {
        method: req.method,
        headers: this.headersFor(req),
        body: req.json !== undefined ? JSON.stringify(req.json) : req.body,
        dispatcher: this.dispatcher,
        signal: req.signal,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.bodyTimeoutMs,
      } as Parameters<typeof request>[1]);
    } catch (err) {
      throw this.networkError(operation, err, req.signal);
    }
    this.log?.debug({ operation, method: req.method, url: redactUrl(req.path), status: res.statusCode, ms: Math.round(performance.now() - started) }, 'store call');
    if (!acceptStatus(res.statusCode)) {
      const text = await res.body.text().catch(() => '');
      let body: unknown = text;
      try {
        body = JSON.parse(text) as unknown;
      } catch {
        // not JSON: keep the text
      }
      throw classify(operation, res.statusCode, body, res.headers) ?? new StoreError('bad-response', operation, res.statusCode, 'unexpected status');
    }
    return { status: res.statusCode, headers: res.headers, body: res.body };
  }

  private networkError(operation: string, err: unknown, signal?: AbortSignal): StoreError {
    if (err instanceof StoreError) return err;
    if (signal?.aborted) return new StoreError('unavailable', operation, undefined, 'aborted by the caller', { cause: err });
    const name = (err as { name?: string }).name ?? '';
    const code = (err as { code?: string }).code ?? '';
    const isTimeout = name === 'TimeoutError' || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError;
    const message = isTimeout ? 'store timed out' : RETRYABLE_NETWORK.has(code) ? `store unreachable (${code})` : `request failed: ${redactUrl((err as Error).message ?? String(err))}`;
    return new StoreError('unavailable', operation, undefined, message, { cause: err, code: isTimeout ? 'timeout' : code || undefined });
  }
}
