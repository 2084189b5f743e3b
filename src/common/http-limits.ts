/**
 * Limits against slow, stalled and hoarding clients, the same for the store's and the bridge's
 * listeners (HTTP and HTTPS): `http.headersTimeoutMs`, `http.requestTimeoutMs`,
 * `http.idleTimeoutMs`, `http.minBodyRateBytesPerSec` over `http.bodyRateWindowMs`,
 * `http.maxConnectionsPerAddress` (docs/store-semantics.md "Slow clients"). Owns the server
 * settings only; what a handler does with a cut request (an upload is never committed
 * half-written) is the handler's.
 *
 * - Headers must be complete within headersTimeoutMs of their first byte (Node's headersTimeout):
 *   headers trickled a byte at a time are answered 408 and cut, at most a second late.
 * - The whole request, headers and body, must arrive within requestTimeoutMs (Node's
 *   requestTimeout; 0 turns it off). Downloads do not count: it ends with the request's last byte.
 * - No byte in either direction for idleTimeoutMs (Node's socket timeout) cuts the connection
 *   when the client is the one stalling: a body that stops flowing, a response the client
 *   stops reading, an idle connection before its first request. A handler that is still working
 *   on a complete request (a large COPY, a slow store) is not cut: nothing is owed by the client.
 *   This is what nginx's client_body_timeout and send_timeout (60 s) and Apache's Timeout do.
 * - A body must keep a minimum rate: over every bodyRateWindowMs in which the server was ready
 *   to read it, at least minBodyRateBytesPerSec on average (Apache's mod_reqtimeout MinRate). A
 *   byte every few seconds dodges the idle limit, not this one. Time in which the server held
 *   the body back (its handler not reading yet, or reading slower than the client sends) does
 *   not count against the client. Cut with 408 when no answer has started, else just cut.
 * - At most maxConnectionsPerAddress connections open at once from one peer address; one more
 *   is closed as it is accepted, before a byte is read (before a TLS handshake on HTTPS), with
 *   a warning at most once a minute. Peers in `uncappedAddresses` (store.trustedProxies: a
 *   proxy or a separately run bridge speaks for many clients) are not counted.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { redactUrl, type Logger } from './logger.js';
import { normaliseIp } from './normalise-ip.js';

export interface HttpLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  idleTimeoutMs: number;
  /** 0 turns the rate limit off. */
  minBodyRateBytesPerSec: number;
  bodyRateWindowMs: number;
  /** 0 turns the cap off. */
  maxConnectionsPerAddress: number;
}

export interface HttpLimitsContext {
  log: Logger;
  /** Peer addresses the connection cap does not count (store.trustedProxies). */
  uncappedAddresses: readonly string[];
}

/**
 * Node checks headersTimeout and requestTimeout on an interval (30 s by default), so a limit
 * strikes up to one interval late: at most a second, less for short limits (tests). The check
 * walks only connections with a request under way, in C++; once a second costs nothing.
 */
export function checkingIntervalOf(limits: Pick<HttpLimits, 'headersTimeoutMs' | 'requestTimeoutMs'>): number {
  const bounds = [limits.headersTimeoutMs, limits.requestTimeoutMs].filter((ms) => ms > 0);
  if (bounds.length === 0) return 30_000;
  return Math.min(1_000, Math.max(50, Math.floor(Math.min(...bounds) / 20)));
}

/** Applies the limits to a server that has not started listening yet. */
export function applyHttpLimits(server: Server, limits: HttpLimits, context: HttpLimitsContext): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  // Read by Node when the server starts listening.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = checkingIntervalOf(limits);
  server.timeout = limits.idleTimeoutMs;
  if (limits.idleTimeoutMs > 0) server.prependListener('request', watchIdleClient);
  if (limits.minBodyRateBytesPerSec > 0) {
    const rate = new BodyRateWatch(limits.minBodyRateBytesPerSec, limits.bodyRateWindowMs, context.log);
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => rate.watch(req, res));
    server.once('close', () => rate.stop());
  }
  if (limits.maxConnectionsPerAddress > 0) capConnections(server, limits.maxConnectionsPerAddress, context);
}

/**
 * A listener on the response's `timeout` replaces Node's default (destroy the socket on any
 * idleness), so the connection is cut only when the client is the one owing bytes. Without a
 * request in flight (before the first, between keep-alive requests) Node's default still applies.
 */
function watchIdleClient(req: IncomingMessage, res: ServerResponse): void {
  res.on('timeout', () => {
    const isBodyStalled = !req.complete;
    const isReadStalled = res.headersSent && (res.writableLength > 0 || req.socket.writableLength > 0);
    if (isBodyStalled || isReadStalled) req.socket.destroy();
  });
}

/** What a cut request gets when no answer has started (as Node answers its own timeouts). */
const REQUEST_TIMEOUT_ANSWER = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';

/** One request whose body is still arriving. */
interface BodyInFlight {
  req: IncomingMessage;
  res: ServerResponse;
  socket: Socket;
  /** When it was last sampled (performance.now()). */
  sampledAt: number;
  /** socket.bytesRead then. */
  bytesRead: number;
  /** Whether the server was reading the socket then (not holding the body back). */
  wasReading: boolean;
  /** Time the server was ready for the body, and the body's bytes received, since it began. */
  awaitedMs: number;
  receivedBytes: number;
  /** (awaitedMs, receivedBytes) at each sample that awaited, oldest first: one window's worth and one more. */
  history: Array<{ awaitedMs: number; receivedBytes: number }>;
}

/**
 * Samples every body in flight on one timer per listener (not one per request), a tenth of the
 * window apart (1 s at most), so a trickle is cut at most that long after its window ends.
 * Bytes are counted on the socket (`bytesRead`, TLS records and chunk framing included): cheap,
 * and no listener on the body that could change how it flows. Time counts only between two
 * samples at which the socket was reading: Node pauses it while the body's buffer is full
 * (the handler not reading yet, or a slow store behind it), and a client cannot be slow while
 * the server does not read.
 */
class BodyRateWatch {
  private readonly inFlight = new Set<BodyInFlight>();
  private readonly sampleEveryMs: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly minBytesPerSec: number,
    private readonly windowMs: number,
    private readonly log: Logger,
  ) {
    this.sampleEveryMs = Math.min(1_000, Math.max(50, Math.floor(windowMs / 10)));
  }

  watch(req: IncomingMessage, res: ServerResponse): void {
    if (!hasBody(req)) return;
    const socket = req.socket;
    this.inFlight.add({
      req,
      res,
      socket,
      sampledAt: performance.now(),
      bytesRead: socket.bytesRead,
      wasReading: !socket.isPaused(),
      awaitedMs: 0,
      receivedBytes: 0,
      history: [{ awaitedMs: 0, receivedBytes: 0 }],
    });
    this.timer ??= setInterval(() => this.sample(), this.sampleEveryMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.inFlight.clear();
  }

  private sample(): void {
    const now = performance.now();
    for (const body of this.inFlight) {
      if (body.req.complete || body.socket.destroyed) {
        this.inFlight.delete(body);
        continue;
      }
      const bytesRead = body.socket.bytesRead;
      const isReading = !body.socket.isPaused();
      body.receivedBytes += bytesRead - body.bytesRead;
      if (body.wasReading && isReading) body.awaitedMs += now - body.sampledAt;
      body.bytesRead = bytesRead;
      body.sampledAt = now;
      body.wasReading = isReading;
      // While the server holds the body back nothing is recorded (bytes that came meanwhile are
      // in the next record's total): the history stays a window long however long the pause.
      if (body.awaitedMs > (body.history.at(-1)?.awaitedMs ?? 0)) body.history.push({ awaitedMs: body.awaitedMs, receivedBytes: body.receivedBytes });
      if (body.awaitedMs < this.windowMs) continue;
      // The newest sample at least one window back: the window slides with the samples.
      while ((body.history[1]?.awaitedMs ?? Infinity) <= body.awaitedMs - this.windowMs) body.history.shift();
      const start = body.history[0] as { awaitedMs: number; receivedBytes: number };
      const spanMs = body.awaitedMs - start.awaitedMs;
      const bytesPerSec = ((body.receivedBytes - start.receivedBytes) * 1000) / spanMs;
      if (bytesPerSec < this.minBytesPerSec) {
        this.inFlight.delete(body);
        this.cut(body, bytesPerSec);
      }
    }
    if (this.inFlight.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** The handler sees its body fail (aborted), so nothing half-sent is committed. */
  private cut(body: BodyInFlight, bytesPerSec: number): void {
    const { req, res, socket } = body;
    // Read before the socket is gone (Node reads the peer's address from the live handle).
    const remote = socket.remoteAddress;
    if (!res.headersSent && socket.writable) socket.write(REQUEST_TIMEOUT_ANSWER);
    socket.destroy();
    this.log.info(
      {
        ip: remote === undefined ? undefined : normaliseIp(remote),
        method: req.method,
        url: redactUrl(req.url ?? ''),
        bytesPerSec: Math.round(bytesPerSec),
        minBytesPerSec: this.minBytesPerSec,
        windowMs: this.windowMs,
      },
      'request body too slow: connection cut',
    );
  }
}

/** Whether the request announces a body (Content-Length above 0, or chunked). */
function hasBody(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = Number(req.headers['content-length'] ?? 0);
  return !Number.isFinite(length) || length > 0;
}

/** A warning about refused connections at most this often per listener. */
const REFUSAL_LOG_EVERY_MS = 60_000;

/**
 * Counts open connections per peer address and closes one past the cap as it is accepted:
 * Node's own 'connection' listeners (HTTP's parser, or TLS's handshake after tls.ts's plaintext
 * check) are taken over and run only for connections under the cap. Closing, not 503: nothing
 * is read or parsed for a refused connection, and on HTTPS no answer is possible before a TLS
 * handshake; clients see a closed connection and retry (rclone's low-level retries, browsers).
 */
function capConnections(server: Server, max: number, context: HttpLimitsContext): void {
  const uncapped = new Set(context.uncappedAddresses.map(normaliseIp));
  const open = new Map<string, number>();
  const accept = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  let refusedSinceLine = 0;
  let lastLineAt = -Infinity;
  server.on('connection', (socket: Socket) => {
    const remote = socket.remoteAddress;
    const address = remote === undefined ? undefined : normaliseIp(remote);
    if (address !== undefined && !uncapped.has(address)) {
      const count = open.get(address) ?? 0;
      if (count >= max) {
        socket.destroy();
        refusedSinceLine += 1;
        const now = performance.now();
        if (now - lastLineAt >= REFUSAL_LOG_EVERY_MS) {
          context.log.warn(
            { ip: address, maxConnectionsPerAddress: max, refused: refusedSinceLine },
            'connections refused: too many open from one address (http.maxConnectionsPerAddress)',
          );
          lastLineAt = now;
          refusedSinceLine = 0;
        }
        return;
      }
      open.set(address, count + 1);
      socket.once('close', () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left > 0) open.set(address, left);
        else open.delete(address);
      });
    }
    for (const listener of accept) listener.call(server, socket);
  });
}
