/**
 * A recording HTTP proxy for the real-client suites, placed between a DAV client and the
 * bridge: it forwards every request unchanged (bodies streamed both ways) and remembers what
 * crossed it (method, path, the size of the If header, status), so a red client run can say
 * which request the bridge refused, without tcpdump. It accepts request heads as large as the
 * bridge does (davfs2 sends one If header listing every lock token it holds: docs/client-quirks.md §4).
 * It never changes a request or an answer.
 */
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { MAX_HEADER_BYTES } from '../../src/bridge/server.js';

export interface RecordedExchange {
  method: string;
  path: string;
  /** Bytes of the If header value; 0 when there was none. */
  ifHeaderBytes: number;
  /** Request headers a client-specific failure is usually about (If, Depth, Destination, Overwrite, Lock-Token, If-Match, If-None-Match, Timeout, Content-Length, Range, X-OC-Mtime). */
  headers: Record<string, string>;
  /** Undefined until the bridge answered (or when it never did). */
  status?: number;
  /** Up to 2 KiB of the bridge's answer when it was 4xx or 5xx. */
  errorBody?: string;
}

export interface DavRecorder {
  url: string;
  readonly exchanges: RecordedExchange[];
  /** Exchanges the bridge answered with 4xx/5xx, minus those `expected` accepts (e.g. PROPFIND 404 of a file not yet created). */
  failures(expected?: (exchange: RecordedExchange) => boolean): RecordedExchange[];
  /** One line per exchange, for failure messages. */
  describe(exchanges?: readonly RecordedExchange[]): string;
  close(): Promise<void>;
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-connection'];
const KEPT_HEADERS = ['if', 'depth', 'destination', 'overwrite', 'lock-token', 'if-match', 'if-none-match', 'timeout', 'content-length', 'range', 'x-oc-mtime'];
const ERROR_BODY_BYTES = 2048;

function forwardable(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = { ...headers };
  for (const name of HOP_BY_HOP) delete out[name];
  return out;
}

function shortened(value: string): string {
  return value.length > 300 ? `${value.slice(0, 300)}… (${value.length} chars)` : value;
}

export async function startDavRecorder(targetUrl: string): Promise<DavRecorder> {
  const target = new URL(targetUrl);
  const exchanges: RecordedExchange[] = [];
  const agent = new http.Agent({ keepAlive: true });

  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    const headers: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = shortened(value);
    }
    const ifHeader = req.headers.if;
    const exchange: RecordedExchange = {
      method: req.method ?? '?',
      path: req.url ?? '?',
      ifHeaderBytes: Buffer.byteLength(typeof ifHeader === 'string' ? ifHeader : ''),
      headers,
    };
    exchanges.push(exchange);
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: forwardable(req.headers), agent },
      (answer) => {
        exchange.status = answer.statusCode;
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardable(answer.headers));
        if ((answer.statusCode ?? 0) >= 400) {
          let kept = '';
          answer.on('data', (chunk: Buffer) => {
            if (kept.length < ERROR_BODY_BYTES) kept += chunk.toString('utf8').slice(0, ERROR_BODY_BYTES - kept.length);
          });
          answer.on('end', () => {
            exchange.errorBody = kept;
          });
        }
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'Content-Length': '0' });
      res.end();
    });
    req.pipe(upstream);
  });
  // A websocket (the apps' push, `/push/ws`): recorded with the status of its handshake (101 when
  // taken), then the two sockets joined as they are, as a proxy that passes Upgrade does.
  const upgraded = new Set<Duplex>();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const exchange: RecordedExchange = { method: req.method ?? '?', path: req.url ?? '?', ifHeaderBytes: 0, headers: {} };
    exchanges.push(exchange);
    upgraded.add(socket);
    socket.once('close', () => upgraded.delete(socket));
    socket.on('error', () => socket.destroy());
    const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers });
    upstream.on('upgrade', (answer, upSocket, upHead) => {
      exchange.status = answer.statusCode;
      upgraded.add(upSocket);
      upSocket.once('close', () => upgraded.delete(upSocket));
      const lines = [`HTTP/1.1 ${answer.statusCode ?? 101} ${answer.statusMessage ?? 'Switching Protocols'}`];
      for (let i = 0; i < answer.rawHeaders.length; i += 2) lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (upHead.length > 0) socket.write(upHead);
      if (head.length > 0) upSocket.write(head);
      upSocket.on('error', () => socket.destroy());
      socket.on('close', () => upSocket.destroy());
      upSocket.on('close', () => socket.destroy());
      upSocket.pipe(socket);
      socket.pipe(upSocket);
    });
    upstream.on('response', (answer) => {
      exchange.status = answer.statusCode;
      answer.resume();
      socket.end(`HTTP/1.1 ${answer.statusCode ?? 502} ${answer.statusMessage ?? ''}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    });
    upstream.on('error', () => socket.destroy());
    upstream.end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  const describe = (list: readonly RecordedExchange[] = exchanges): string =>
    list
      .map((e) => {
        const extra = Object.entries(e.headers)
          .map(([name, value]) => `${name}: ${value}`)
          .join(' | ');
        const body = e.errorBody ? `\n      answer: ${e.errorBody.replace(/\s+/g, ' ').slice(0, 600)}` : '';
        return `  ${e.method} ${e.path} -> ${e.status ?? 'no answer'}${e.ifHeaderBytes ? ` (If: ${e.ifHeaderBytes} bytes)` : ''}${extra ? `\n      ${extra}` : ''}${body}`;
      })
      .join('\n');

  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    failures(expected = () => false) {
      return exchanges.filter((e) => (e.status === undefined || e.status >= 400) && !expected(e));
    },
    describe,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of upgraded) socket.destroy();
      });
      agent.destroy();
    },
  };
}
