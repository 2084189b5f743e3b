/**
 * The access log of both listeners (log.accessLog): one line per request, written when its answer
 * is finished or its connection closed before that (`closedEarly: true`), never before. Fields:
 * method, url (path and query through redactUrl: no token or key of a URL), status, bytesIn,
 * bytesOut, ms, user (the authenticated username or user UUID; never a credential).
 *
 * Bytes are counted on the connection, headers included: what the socket read and wrote since
 * the previous request on it ended. Exact for HTTP/1.1 as clients use it (one request at a time
 * per connection); a client pipelining requests has the next one's bytes counted to the one
 * before. Cost per request: one 'close' listener and the line itself.
 *
 * Level info, whatever the status (a failure's cause has its own warn or error line where it
 * happened: the store's error handler, the bridge's verb wrapper); debug for the health routes (a
 * balancer polls them every few seconds). With accessLog off nothing is written.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { redactUrl, type Logger } from './logger.js';
import type { Metrics, Part } from './metrics.js';

/** What the socket had read and written when its previous request ended. */
const COUNTED = Symbol('driveway.accessLog.counted');
type CountedSocket = Socket & { [COUNTED]?: { read: number; written: number } };

export interface AccessLine {
  reqId: string | undefined;
  method: string;
  /** The request target as sent (path and query), redacted. */
  url: string;
  /** Absent when the connection closed before a status line was sent. */
  status: number | undefined;
  bytesIn: number;
  bytesOut: number;
  ms: number;
  user: string | undefined;
  closedEarly: true | undefined;
}

export interface AccessLogOptions<Context> {
  log: Logger;
  /** log.accessLog; false writes nothing. */
  enabled: boolean;
  /** Who made the request, read when it ends (authentication comes after it started): username or user UUID. */
  userOf(context: Context): string | undefined;
  /** The request's id when it has one (fastify's reqId, as on the request's other lines). */
  idOf?(context: Context): string;
  /** metrics.enabled: every request is counted there too, whether or not it is logged. */
  metrics?: Metrics | undefined;
  part: Part;
}

export class AccessLog<Context> {
  /**
   * The lines go through a child without the redaction paths: every field is made safe here
   * (the URL through redactUrl; the rest are numbers, the method and a name), and pino's
   * redaction of wildcard paths cost 11 of the 15 µs a line took.
   */
  private readonly log: Logger;

  constructor(private readonly options: AccessLogOptions<Context>) {
    this.log = options.log.child({}, { redact: { paths: [] } });
  }

  /** Call as the request arrives; writes its line when it ends. `health`: a /healthz or /readyz request. */
  watch(req: IncomingMessage, res: ServerResponse, context: Context, health = false): void {
    const started = performance.now();
    const socket = req.socket as CountedSocket;
    res.once('close', () => this.write(req, res, socket, context, started, health));
  }

  private write(req: IncomingMessage, res: ServerResponse, socket: CountedSocket, context: Context, started: number, health: boolean): void {
    const status = res.headersSent ? res.statusCode : undefined;
    // Counted even when no line is written: the next request on this connection starts from here.
    const read = socket.bytesRead;
    const written = socket.bytesWritten ?? 0;
    const before = socket[COUNTED];
    const bytesIn = read - (before?.read ?? 0);
    const bytesOut = written - (before?.written ?? 0);
    if (before) {
      before.read = read;
      before.written = written;
    } else socket[COUNTED] = { read, written };
    const { log } = this;
    const { enabled, userOf, idOf, metrics } = this.options;
    const ms = Math.round((performance.now() - started) * 10) / 10;
    metrics?.observe(this.options.part, req.method ?? '', status, ms, bytesIn, bytesOut);
    if (!enabled || !log.isLevelEnabled(health ? 'debug' : 'info')) return;

    // Undefined fields (no status sent, anonymous) are left out of the line by pino.
    const line: AccessLine = {
      reqId: idOf?.(context),
      method: req.method ?? '',
      url: redactUrl(req.url ?? ''),
      status,
      bytesIn,
      bytesOut,
      ms,
      user: userOf(context),
      closedEarly: res.writableFinished ? undefined : true,
    };
    if (health) log.debug(line, 'health request');
    else log.info(line, 'request');
  }
}
