/**
 * Prometheus metrics (metrics.enabled, off by default), served on their own listener
 * (metrics.port on `host`) so that they never show on the store's or the WebDAV port.
 *
 * Requests are counted where their access-log line is made (access-log.ts), by part, method and
 * status class; gauges and cache counters are read when scraped, never kept up to date per
 * request. prom-client's default metrics add the process's CPU, memory, handles and event-loop lag
 * (`nodejs_eventloop_lag_seconds`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { listenFailure } from './startup-error.js';
import type { Logger } from './logger.js';

export type Part = 'store' | 'bridge';

/** Methods counted by name; anything else (a client may send any token) is `other`. */
const METHODS = new Set(['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK']);
const STATUS_CLASSES = ['none', '1xx', '2xx', '3xx', '4xx', '5xx'];

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'part' | 'method' | 'status'>;
  private readonly duration: Histogram<'part' | 'method'>;
  private readonly received: Counter<'part'>;
  private readonly sent: Counter<'part'>;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({ name: 'driveway_http_requests_total', help: 'Requests answered, by part (store, bridge), method and status class (none: the client left first)', labelNames: ['part', 'method', 'status'], registers });
    this.duration = new Histogram({
      name: 'driveway_http_request_duration_seconds',
      help: 'From a request arriving to its answer finished, by part and method',
      labelNames: ['part', 'method'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.received = new Counter({ name: 'driveway_http_received_bytes_total', help: 'Bytes read from clients, headers included, by part', labelNames: ['part'], registers });
    this.sent = new Counter({ name: 'driveway_http_sent_bytes_total', help: 'Bytes written to clients, headers included, by part', labelNames: ['part'], registers });
  }

  /** One finished request (access-log.ts calls it). */
  observe(part: Part, method: string, status: number | undefined, ms: number, bytesIn: number, bytesOut: number): void {
    const verb = METHODS.has(method) ? method : 'other';
    this.requests.inc({ part, method: verb, status: STATUS_CLASSES[status === undefined ? 0 : Math.min(5, Math.max(1, Math.floor(status / 100)))] as string });
    this.duration.observe({ part, method: verb }, ms / 1000);
    if (bytesIn > 0) this.received.inc({ part }, bytesIn);
    if (bytesOut > 0) this.sent.inc({ part }, bytesOut);
  }

  /** A gauge read at each scrape (`read` must be cheap: it runs once per scrape). */
  gauge(name: string, help: string, read: () => number | Promise<number>): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        this.set(await read());
      },
    });
  }

  /** A counter whose total is kept elsewhere (a cache's hits), read at each scrape. */
  counter(name: string, help: string, read: () => number): void {
    new Counter({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }
}

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/** `GET /metrics` on its own listener; every other request is 404. */
export async function startMetricsServer(metrics: Metrics, host: string, port: number, log: Logger): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Length': '0' }).end();
      return;
    }
    metrics.registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': metrics.registry.contentType, 'Content-Length': String(Buffer.byteLength(text)) });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        log.error({ err }, 'metrics scrape failed');
        res.writeHead(500, { 'Content-Length': '0' }).end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(listenFailure(err, { host, port, setting: 'metrics.port / DRIVEWAY_METRICS_PORT' })));
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics`;
  log.info({ url }, 'metrics listening');
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
