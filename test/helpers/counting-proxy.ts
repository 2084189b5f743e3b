/**
 * An HTTP proxy for tests, placed between the bridge and the store: it forwards every request
 * unchanged and records what crossed it (method, path, status, body bytes each way), so a test
 * can prove how many store calls a DAV request cost and how many bytes the bridge read from the
 * store. It can also break an upload mid-body, to play a store that fails halfway.
 * It can also answer a route itself, to play a server that lacks it (or answers it otherwise).
 * Streams both ways with backpressure: bytes counted are bytes the bridge actually pulled.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  method: string;
  /** Path and query as the bridge sent them. */
  path: string;
  /** The Depth header, when there was one (a PROPFIND's). */
  depth?: string;
  /** Undefined until the store answered. */
  status?: number;
  requestBytes: number;
  /** Response body bytes forwarded to the bridge so far. */
  responseBytes: number;
  /** True once the exchange is over (answered in full, or either side hung up). */
  settled: boolean;
}

export interface CountingProxy {
  url: string;
  /** Every request since the last reset, in arrival order. */
  readonly requests: ProxiedRequest[];
  reset(): void;
  /** Requests whose method and path match, e.g. `count('GET', /\/dirlist$/)`. */
  matching(method: string, path: RegExp): ProxiedRequest[];
  /**
   * The next request whose path matches is cut after `bytes` of its body: both connections are
   * destroyed, as when a store dies halfway through an upload. With `method`, only a request of
   * that method matches (a POST of /api/nodes/{id} is a copy or move, its GET the details).
   */
  breakNextRequestAfter(path: RegExp, bytes: number, method?: string): void;
  /**
   * From now on requests whose path matches are answered by the proxy itself with `status` and
   * `body` (JSON), never reaching the store: a server without that route, e.g. `(404, 'Not Found')`.
   * They are still recorded. Returns a function that lets them through again.
   */
  answerInstead(path: RegExp, status: number, body: unknown): () => void;
  /** Headers (lower-case) removed from every request from now on, e.g. `range` to play a store that ignores it. */
  readonly droppedRequestHeaders: Set<string>;
  close(): Promise<void>;
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-connection'];

function forwardable(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = { ...headers };
  for (const name of HOP_BY_HOP) delete out[name];
  return out;
}

export async function startCountingProxy(targetUrl: string): Promise<CountingProxy> {
  const target = new URL(targetUrl);
  const agent = new http.Agent({ keepAlive: true });
  const requests: ProxiedRequest[] = [];
  const breaks: Array<{ path: RegExp; bytes: number; method?: string }> = [];
  const droppedRequestHeaders = new Set<string>();
  const answers: Array<{ path: RegExp; status: number; body: string }> = [];

  const server = http.createServer((req, res) => {
    const record: ProxiedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', requestBytes: 0, responseBytes: 0, settled: false };
    if (typeof req.headers.depth === 'string') record.depth = req.headers.depth;
    requests.push(record);
    const answer = answers.find((a) => a.path.test(record.path));
    if (answer) {
      record.status = answer.status;
      req.on('data', (chunk: Buffer) => {
        record.requestBytes += chunk.length;
      });
      req.on('end', () => {
        res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer.body) });
        res.end(answer.body);
        record.responseBytes = Buffer.byteLength(answer.body);
        record.settled = true;
      });
      return;
    }
    const breakIndex = breaks.findIndex((b) => b.path.test(record.path) && (b.method === undefined || b.method === record.method));
    const breakAfter = breakIndex >= 0 ? breaks.splice(breakIndex, 1)[0]?.bytes : undefined;

    const headers = forwardable(req.headers);
    headers.host = target.host;
    for (const name of droppedRequestHeaders) delete headers[name];
    const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent }, (answer) => {
      record.status = answer.statusCode;
      res.writeHead(answer.statusCode ?? 502, forwardable(answer.headers));
      answer.on('data', (chunk: Buffer) => {
        record.responseBytes += chunk.length;
      });
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    upstream.on('error', () => res.destroy());
    // The bridge hung up (it aborted a download or an upload): the store must see it too.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
      record.settled = true;
    });
    req.on('data', (chunk: Buffer) => {
      record.requestBytes += chunk.length;
      if (breakAfter !== undefined && record.requestBytes > breakAfter) {
        upstream.destroy();
        req.socket.destroy();
      }
    });
    req.pipe(upstream);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    droppedRequestHeaders,
    reset() {
      requests.length = 0;
    },
    matching(method, path) {
      return requests.filter((r) => r.method === method && path.test(r.path));
    },
    answerInstead(path, status, body) {
      const rule = { path, status, body: JSON.stringify(body) };
      answers.push(rule);
      return () => {
        answers.splice(answers.indexOf(rule), 1);
      };
    },
    breakNextRequestAfter(path, bytes, method) {
      breaks.push({ path, bytes, ...(method === undefined ? {} : { method }) });
    },
    async close() {
      agent.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
